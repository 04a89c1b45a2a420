// One delivery attempt: an HTTPS POST to the webhook's URL, made safe to point at
// anything. The host is resolved at every attempt and every address it
// resolves to must pass the address rule (address.ts) unless WEBHOOK_ALLOW_PRIVATE
// lifts it; the connection goes to the address that was checked (no second look-up
// between the check and the connect). The receiver's certificate is verified
// against the system's trust store and NODE_EXTRA_CA_CERTS, never skipped;
// redirects are not followed; the attempt ends after its timeout; at most 64 KiB
// of the answer is read.
import { lookup } from 'node:dns/promises';
import https from 'node:https';
import { isIP } from 'node:net';
import { refusal } from './address.ts';

export const DELIVERY_TIMEOUT_MS = 10_000;
const MAX_ANSWER_BYTES = 64 * 1024;

export interface Target { readonly address: string; readonly family: 4 | 6 }

export interface Outcome {
  /** The receiver's status, or null when there was no answer. */
  readonly status: number | null;
  /** Seconds the receiver asked to wait (Retry-After), if it did. */
  readonly retryAfter: number | null;
  readonly error: string | null;
}

/** The address to connect to for `url`, after the address rule; throws with the reason when refused. */
export async function resolveTarget(url: URL, allowPrivate: boolean): Promise<Target> {
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const found = isIP(host) ? [{ address: host, family: isIP(host) }] : await lookup(host, { all: true, verbatim: true });
  if (found.length === 0) throw new Error(`${host} has no address`);
  if (!allowPrivate) {
    for (const a of found) {
      const why = refusal(a.address);
      if (why) throw new Error(`address ${a.address} of ${host} refused (${why})`);
    }
  }
  return { address: found[0]!.address, family: found[0]!.family === 6 ? 6 : 4 };
}

/** Retry-After as seconds: a number of seconds or an HTTP date. */
function retryAfterOf(value: string | undefined, now: number): number | null {
  if (!value) return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - now) / 1000));
}

export async function post(url: URL, headers: Readonly<Record<string, string>>, body: string,
  o: { allowPrivate: boolean; timeoutMs?: number }): Promise<Outcome> {
  let target: Target;
  try {
    target = await resolveTarget(url, o.allowPrivate);
  } catch (error) {
    return { status: null, retryAfter: null, error: (error as Error).message };
  }
  return new Promise((resolve) => {
    let settled = false;
    const done = (outcome: Outcome) => { if (!settled) { settled = true; clearTimeout(timer); resolve(outcome); } };
    const req = https.request(url, {
      method: 'POST', agent: false,
      headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
      // The connection goes to the address that passed the rule; the certificate is checked against the URL's host.
      lookup: (_host, opts, cb) => {
        const callback = cb as (e: null, a: string | { address: string; family: number }[], f?: number) => void;
        if ((opts as { all?: boolean }).all) callback(null, [{ address: target.address, family: target.family }]);
        else callback(null, target.address, target.family);
      },
    }, (res) => {
      let read = 0;
      const status = res.statusCode ?? 0;
      const retryAfter = retryAfterOf(res.headers['retry-after'], Date.now());
      const finish = () => { done({ status, retryAfter, error: null }); req.destroy(); };
      res.on('data', (chunk: Buffer) => { read += chunk.length; if (read >= MAX_ANSWER_BYTES) finish(); });
      res.on('end', finish);
      res.on('error', finish);
    });
    const timer = setTimeout(() => { done({ status: null, retryAfter: null, error: 'timed out' }); req.destroy(); }, o.timeoutMs ?? DELIVERY_TIMEOUT_MS);
    req.on('error', (e) => done({ status: null, retryAfter: null, error: e.message }));
    req.end(body);
  });
}
