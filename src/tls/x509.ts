// Minimal X.509 v3 certificate writer on top of node:crypto: enough to issue the
// self-signed server and client certificates the service and its tests need,
// without a third-party crypto package. DER encoding follows X.690.
import { createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { isIP } from 'node:net';

const tag = (t: number, ...parts: Buffer[]): Buffer => {
  const body = Buffer.concat(parts);
  return Buffer.concat([Buffer.from([t]), derLength(body.length), body]);
};

function derLength(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

const seq = (...parts: Buffer[]) => tag(0x30, ...parts);

function oid(dotted: string): Buffer {
  const [a = 0, b = 0, ...rest] = dotted.split('.').map(Number);
  const out = [40 * a + b];
  for (const n of rest) {
    const chunk = [n & 0x7f];
    for (let v = Math.floor(n / 128); v > 0; v = Math.floor(v / 128)) chunk.unshift((v & 0x7f) | 0x80);
    out.push(...chunk);
  }
  return tag(0x06, Buffer.from(out));
}

function positiveInteger(bytes: Buffer): Buffer {
  const b = Buffer.from(bytes);
  b[0] = (b[0] ?? 0) & 0x7f || 0x01;
  return tag(0x02, b);
}

function time(d: Date): Buffer {
  const iso = d.toISOString().replace(/[-:T]/g, '').slice(0, 14) + 'Z';
  const year = d.getUTCFullYear();
  return year >= 1950 && year < 2050 ? tag(0x17, Buffer.from(iso.slice(2))) : tag(0x18, Buffer.from(iso));
}

const name = (cn: string) => seq(tag(0x31, seq(oid('2.5.4.3'), tag(0x0c, Buffer.from(cn, 'utf8')))));

function ipBytes(ip: string): Buffer {
  if (isIP(ip) === 4) return Buffer.from(ip.split('.').map(Number));
  const [head = '', tail = ''] = ip.split('::');
  const groups = (s: string) => (s ? s.split(':') : []);
  const h = groups(head);
  const t = groups(tail);
  const all = ip.includes('::') ? [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t] : h;
  return Buffer.concat(all.map((g: string) => { const b = Buffer.alloc(2); b.writeUInt16BE(parseInt(g, 16)); return b; }));
}

function signatureAlgorithm(key: KeyObject): { id: Buffer; digest: string | null } {
  switch (key.asymmetricKeyType) {
    case 'ec': return { id: seq(oid('1.2.840.10045.4.3.2')), digest: 'sha256' };
    case 'rsa': return { id: seq(oid('1.2.840.113549.1.1.11'), tag(0x05)), digest: 'sha256' };
    case 'ed25519': return { id: seq(oid('1.3.101.112')), digest: null };
    default: throw new Error(`unsupported key type ${key.asymmetricKeyType}`);
  }
}

export interface CertificateOptions {
  subject: string;
  /** Issuer name and key; omitted for a self-signed certificate. */
  issuer?: { name: string; key: KeyObject };
  publicKey: KeyObject;
  signingKey: KeyObject;
  notBefore: Date;
  notAfter: Date;
  altNames?: string[];
  ca?: boolean;
}

/** Issues a certificate and returns it PEM-encoded. */
export function issueCertificate(o: CertificateOptions): string {
  const signer = o.issuer?.key ?? o.signingKey;
  const alg = signatureAlgorithm(signer);
  const extensions: Buffer[] = [];
  if (o.altNames?.length) {
    const names = o.altNames.map((n) => (isIP(n) ? tag(0x87, ipBytes(n)) : tag(0x82, Buffer.from(n, 'ascii'))));
    extensions.push(seq(oid('2.5.29.17'), tag(0x04, seq(...names))));
  }
  if (o.ca) extensions.push(seq(oid('2.5.29.19'), tag(0x01, Buffer.from([0xff])), tag(0x04, seq(tag(0x01, Buffer.from([0xff]))))));
  const tbs = seq(
    tag(0xa0, tag(0x02, Buffer.from([2]))),
    positiveInteger(randomBytes(16)),
    alg.id,
    name(o.issuer?.name ?? o.subject),
    seq(time(o.notBefore), time(o.notAfter)),
    name(o.subject),
    o.publicKey.export({ type: 'spki', format: 'der' }),
    ...(extensions.length ? [tag(0xa3, seq(...extensions))] : []),
  );
  const signature = sign(alg.digest, tbs, signer);
  const der = seq(tbs, alg.id, tag(0x03, Buffer.from([0]), signature));
  const b64 = der.toString('base64').replace(/.{64}/g, '$&\n').replace(/\n$/, '');
  return `-----BEGIN CERTIFICATE-----\n${b64}\n-----END CERTIFICATE-----\n`;
}

export interface KeyPairPem { certPem: string; keyPem: string }

export interface SelfSignedOptions {
  cn: string;
  days?: number;
  altNames?: string[];
  /** Reuse an existing private key (re-issuing keeps the SPKI fingerprint). */
  keyPem?: string;
  notBefore?: Date;
}

/** A fresh EC P-256 key and a self-signed certificate for it. */
export function createSelfSigned(o: SelfSignedOptions): KeyPairPem {
  const privateKey = o.keyPem ? createPrivateKey(o.keyPem) : generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
  const notBefore = o.notBefore ?? new Date(Date.now() - 60_000);
  const notAfter = new Date(notBefore.getTime() + (o.days ?? 825) * 86_400_000);
  const certPem = issueCertificate({
    subject: o.cn, publicKey: createPublicKey(privateKey), signingKey: privateKey, notBefore, notAfter,
    ...(o.altNames ? { altNames: o.altNames } : {}),
  });
  return { certPem, keyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() };
}
