// The TLS profile of the mTLS listener: TLS 1.2 and 1.3 only; in TLS 1.2 only
// forward-secret (ECDHE) key exchange with AEAD ciphers — the Mozilla
// "intermediate" profile without its DHE suites — and TLS 1.3's suites as they
// are; the server's order preferred. TLS_CIPHERS replaces the list (OpenSSL names).
import type { TlsOptions } from 'node:tls';

export const DEFAULT_CIPHERS = [
  'TLS_AES_128_GCM_SHA256', 'TLS_AES_256_GCM_SHA384', 'TLS_CHACHA20_POLY1305_SHA256',
  'ECDHE-ECDSA-AES128-GCM-SHA256', 'ECDHE-RSA-AES128-GCM-SHA256', 'ECDHE-ECDSA-AES256-GCM-SHA384',
  'ECDHE-RSA-AES256-GCM-SHA384', 'ECDHE-ECDSA-CHACHA20-POLY1305', 'ECDHE-RSA-CHACHA20-POLY1305',
].join(':');

/** The handshake asks for a client certificate and accepts any, so that a readable 401 can be returned. */
export function tlsProfile(ciphers = DEFAULT_CIPHERS): TlsOptions {
  return { requestCert: true, rejectUnauthorized: false, minVersion: 'TLSv1.2', ciphers, honorCipherOrder: true };
}
