// The server's own certificate: the operator's files, or one made on first start.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createSelfSigned } from './x509.ts';

export interface ServerTls {
  readonly key: Buffer;
  readonly cert: Buffer;
  readonly certFile: string;
  /** True when this call generated the certificate. */
  readonly created: boolean;
}

export function serverTls(o: { certFile?: string | undefined; keyFile?: string | undefined; dataDir: string }): ServerTls {
  if (o.certFile && o.keyFile) {
    return { key: readFileSync(o.keyFile), cert: readFileSync(o.certFile), certFile: o.certFile, created: false };
  }
  const dir = join(o.dataDir, 'tls');
  const certFile = join(dir, 'server.pem');
  const keyFile = join(dir, 'server.key');
  let created = false;
  if (!existsSync(certFile) || !existsSync(keyFile)) {
    mkdirSync(dir, { recursive: true });
    const pair = createSelfSigned({ cn: 'localhost', days: 825, altNames: ['localhost', '127.0.0.1', '::1'] });
    writeFileSync(keyFile, pair.keyPem, { mode: 0o600 });
    writeFileSync(certFile, pair.certPem);
    created = true;
  }
  return { key: readFileSync(keyFile), cert: readFileSync(certFile), certFile, created };
}
