// Plain-HTTP requests to the trusted-proxy listener, as a
// TLS-terminating proxy would send them, and certificate helpers for auth tests.
import { createHash, X509Certificate } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import type { App } from '../../src/app.ts';
import { readResponse, readUntilClosed, type TestResponse } from './client.ts';

/** Starts `app.http` on a free port of 127.0.0.1 and returns the port. */
export async function listenPlain(app: App): Promise<number> {
  const server = app.http;
  if (!server) throw new Error('the app has no plain-HTTP listener (no proxy settings)');
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const address = server.address();
  if (typeof address !== 'object' || !address) throw new Error('no address');
  return address.port;
}

/** Stops `app.http` (the harness only closes the HTTPS listener). */
export async function closePlain(app: App): Promise<void> {
  const server = app.http;
  if (!server?.listening) return;
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
}

export interface PlainOptions {
  readonly headers?: Record<string, string | string[]>;
  readonly body?: string;
}

/** Sends `text` as it is on a fresh plain connection and reads until the server closes it. */
export function plainRaw(port: number, text: string): Promise<TestResponse> {
  const socket = net.connect(port, '127.0.0.1', () => socket.write(text));
  return readUntilClosed(socket);
}

/** One request on a fresh connection (so that nothing is cached per connection). */
export function plainRequest(port: number, method: string, path: string, o: PlainOptions = {}): Promise<TestResponse> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path, agent: false, headers: o.headers ?? {} },
      (res) => void readResponse(res).then(resolve, reject));
    req.on('error', reject);
    req.end(o.body);
  });
}

/** A PEM as nginx's `$ssl_client_escaped_cert` forwards it. */
export const escapedPem = (pem: string): string => encodeURIComponent(pem);

/** SHA-256 of the DER SubjectPublicKeyInfo of the first certificate of a PEM, lower-case hex. */
export function spkiOf(pem: string): string {
  const der = new X509Certificate(pem).publicKey.export({ type: 'spki', format: 'der' });
  return createHash('sha256').update(der).digest('hex');
}

export const noAccessMessage = (signature: string) => `You do not have access to the API. Your signature: ${signature}`;
