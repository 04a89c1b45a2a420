// Real certificates for tests: self-signed (current or expired) and CA-issued.
import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import { createSelfSigned, issueCertificate, type KeyPairPem } from '../../src/tls/x509.ts';

export type TestCert = KeyPairPem;

export const selfSigned = (cn: string): TestCert => createSelfSigned({ cn, days: 30 });

export function expired(cn: string): TestCert {
  return createSelfSigned({ cn, days: 1, notBefore: new Date(Date.now() - 10 * 86_400_000) });
}

/** A leaf issued by a throw-away CA; `cert` carries leaf and CA (a chain); `caPem` is the CA alone. */
export function chained(cn: string, altNames?: string[]): TestCert & { leafPem: string; caPem: string } {
  const ca = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const day = 86_400_000;
  const caPem = issueCertificate({ subject: `${cn} CA`, publicKey: ca.publicKey, signingKey: ca.privateKey,
    notBefore: new Date(Date.now() - day), notAfter: new Date(Date.now() + day), ca: true });
  const leaf = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const leafPem = issueCertificate({ subject: cn, issuer: { name: `${cn} CA`, key: ca.privateKey },
    publicKey: createPublicKey(leaf.privateKey), signingKey: leaf.privateKey,
    notBefore: new Date(Date.now() - day), notAfter: new Date(Date.now() + day), ...(altNames ? { altNames } : {}) });
  return { certPem: leafPem + caPem, leafPem, caPem, keyPem: leaf.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() };
}
