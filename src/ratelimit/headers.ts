// What every limited response says about its bucket: the X-RateLimit-* headers
// clients know, and the IETF draft's RateLimit-Policy / RateLimit fields
// (draft-ietf-httpapi-ratelimit-headers: a policy "default" of q requests per w
// seconds, and r requests remaining with t seconds until the quota is whole again).
import type { Decision, Policy } from './gcra.ts';

export function rateLimitHeaders(p: Policy, d: Decision): Record<string, string> {
  const window = Math.max(1, Math.ceil(p.burst / p.rate));
  return {
    'x-ratelimit-limit': String(p.burst),
    'x-ratelimit-remaining': String(d.remaining),
    'x-ratelimit-reset': String(d.resetSeconds),
    'ratelimit-policy': `"default";q=${p.burst};w=${window}`,
    ratelimit: `"default";r=${d.remaining};t=${d.resetSeconds}`,
  };
}
