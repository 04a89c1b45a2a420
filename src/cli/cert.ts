import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { X509Certificate } from 'node:crypto';
import { spkiFingerprint } from '../auth/certificate.ts';
import { createSelfSigned } from '../tls/x509.ts';
import { type Command, output, positiveInt, requiredString } from './command.ts';

export interface WrittenCert { readonly dir: string; readonly fingerprint: string; readonly files: readonly string[] }

/** Writes cert.pem, key.pem and client.pem (both, for curl and PHP) into `dir`. */
export function writeClientCert(dir: string, cn: string, days: number): WrittenCert {
  mkdirSync(dir, { recursive: true });
  const pair = createSelfSigned({ cn, days });
  const files = [join(dir, 'cert.pem'), join(dir, 'key.pem'), join(dir, 'client.pem')];
  writeFileSync(files[0]!, pair.certPem);
  writeFileSync(files[1]!, pair.keyPem, { mode: 0o600 });
  writeFileSync(files[2]!, pair.certPem + pair.keyPem, { mode: 0o600 });
  return { dir, fingerprint: spkiFingerprint(new X509Certificate(pair.certPem)), files };
}

export const certCreate: Command = {
  words: ['cert', 'create'],
  usage: 'cert create --out DIR [--cn NAME] [--days N] [--json]',
  summary: 'Writes a self-signed client certificate into DIR: cert.pem, key.pem and client.pem (both, for curl and PHP);\n'
    + 'prints its SPKI fingerprint. --cn sets its name (default "asset-tracker client"), --days its validity (default 825).',
  options: { out: { type: 'string' }, cn: { type: 'string' }, days: { type: 'string' } },
  async run(args) {
    const dir = resolve(requiredString(args, 'out', this.usage));
    const days = args.values.days === undefined ? 825 : positiveInt(args.values.days, '--days');
    const cn = typeof args.values.cn === 'string' ? args.values.cn : 'asset-tracker client';
    const written = writeClientCert(dir, cn, days);
    output(args, `wrote ${written.files.join(', ')} (fingerprint ${written.fingerprint})`, written);
  },
};
