// Webhook secrets: 32 random bytes, written `whsec_` + base64 (the Standard
// Webhooks form). The signing key of `webhook-signature` is those bytes; the key of
// v3.0's `X-Signature` is the whole string as shown to the integrator.
import { createHmac, randomBytes } from 'node:crypto';

export const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

/** `X-Signature`: `sha256=` + hex HMAC-SHA256 of `timestamp.body`, keyed with the secret string. */
export const specSignature = (secret: string, timestamp: number, body: string) =>
  `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;

/** `webhook-signature` (Standard Webhooks): `v1,` + base64 HMAC-SHA256 of `id.timestamp.body`, keyed with the secret's bytes. */
export const standardSignature = (secret: string, id: string, timestamp: number, body: string) =>
  `v1,${createHmac('sha256', Buffer.from(secret.replace(/^whsec_/, ''), 'base64')).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
