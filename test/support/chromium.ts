// The browser behind the tests that drive one (playwright-core): Debian's Chromium
// (`apt-get install chromium`), or the build CHROMIUM names.
import { existsSync } from 'node:fs';

export const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';

/**
 * Why the browser cannot be driven here, or false. With REQUIRE_CHROMIUM=1 (CI) a missing
 * browser is a failure; otherwise `what` is skipped, said loudly.
 */
export function chromiumMissing(what: string): string | false {
  const missing = existsSync(CHROMIUM) ? false : `no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM)`;
  if (missing && process.env.REQUIRE_CHROMIUM === '1') throw new Error(`REQUIRE_CHROMIUM=1 but ${missing}`);
  if (missing) console.warn(`\n*** ${what}: ${missing} ***\n`);
  return missing;
}
