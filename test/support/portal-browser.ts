// What the portal's browser tests do on a page (playwright-core): a fresh window, a form
// pressed and its answer loaded, signing in (and again, past the login throttle's pause
// after a failure), and reading an alert, an asset's field or a list's first column.
import type { Browser, Locator, Page } from 'playwright-core';
import { addUser, setPassword } from '../../src/admin/accounts.ts';
import type { Database } from '../../src/db/database.ts';
import type { Level } from '../../src/model/types.ts';

/** The longest any one wait (a navigation, an element, a download) may take. */
export const WAIT_MS = 20_000;

export interface Person { readonly id: number; readonly username: string; password: string }

/** A user of the company who can sign in on the portal (a password of its own). */
export async function person(database: Database, companyId: number, username: string, level: Level = 'user'): Promise<Person> {
  const id = await addUser(database, { companyId, username, email: `${username}@example.com`, level, firstName: 'Pat', lastName: 'Lee' });
  const password = `correct horse ${username}`;
  await setPassword(database, id, password);
  return { id, username, password };
}

type Who = { readonly username: string; readonly password: string };

/** The page helpers for a browser (asked when used: tests launch it in `before`) and the portal's URLs. */
export function portalPages(browser: () => Browser, url: (path: string, host?: string) => string, waitMs = WAIT_MS) {
  async function newPage(): Promise<Page> {
    const context = await browser().newContext({ ignoreHTTPSErrors: true, serviceWorkers: 'block' });
    context.setDefaultTimeout(waitMs);
    context.setDefaultNavigationTimeout(waitMs);
    return context.newPage();
  }

  /** Presses a form's button and waits until the page it leads to (after any redirect) has loaded. */
  async function submit(page: Page, button: Locator): Promise<void> {
    const loaded = page.waitForEvent('load');
    await button.click();
    await loaded;
  }

  async function signIn(page: Page, who: Who, host = 'localhost'): Promise<void> {
    await page.goto(url('/login', host));
    await page.getByLabel('Username').fill(who.username);
    await page.getByLabel('Password').fill(who.password);
    await submit(page, page.getByRole('button', { name: 'Sign in' }));
  }

  const alertOf = (page: Page) => page.getByRole('alert').innerText();

  /**
   * Signs in, waiting out the pause the login throttle imposes on a username after a failed
   * attempt (its refusal the only answer retried, for at most `waitMs`).
   */
  async function signInAgain(page: Page, who: Who): Promise<void> {
    const deadline = Date.now() + waitMs;
    await signIn(page, who);
    while (page.url() === url('/login') && /^Can't retry login this soon/.test(await alertOf(page)) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 250));
      await signIn(page, who);
    }
  }

  const fieldOf = (page: Page, label: string) => page.locator(`xpath=//dl[@class="fields"]/dt[.="${label}"]/following-sibling::dd[1]`).innerText();
  const listed = async (page: Page) => (await page.locator('table tbody tr td:first-child a').allInnerTexts()).sort();

  return { newPage, submit, signIn, signInAgain, alertOf, fieldOf, listed };
}
