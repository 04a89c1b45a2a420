// What a presented client certificate says about itself, worked out once per TLS
// connection (or once per distinct proxy header), never per request.
import { createHash, X509Certificate } from 'node:crypto';
import type { TLSSocket } from 'node:tls';

export interface CertificateIdentity {
  /** SHA-256 of the DER SubjectPublicKeyInfo, lower-case hex. */
  readonly fingerprint: string;
  /** Self-signed, no chain, and its signature verifies with its own key. */
  readonly selfSigned: boolean;
  readonly notBefore: number;
  readonly notAfter: number;
}

export function spkiFingerprint(cert: X509Certificate): string {
  return createHash('sha256').update(cert.publicKey.export({ type: 'spki', format: 'der' })).digest('hex');
}

export function identityOf(cert: X509Certificate, chainLength: number): CertificateIdentity {
  const selfSigned = chainLength === 1 && cert.issuer === cert.subject && cert.checkIssued(cert) && cert.verify(cert.publicKey);
  return { fingerprint: spkiFingerprint(cert), selfSigned, notBefore: Date.parse(cert.validFrom), notAfter: Date.parse(cert.validTo) };
}

export const isCurrent = (id: CertificateIdentity, now: number) => now >= id.notBefore && now <= id.notAfter;

const bySocket = new WeakMap<TLSSocket, CertificateIdentity | null>();

/** The certificate the TLS client presented on this connection, or null. */
export function socketIdentity(socket: TLSSocket): CertificateIdentity | null {
  const known = bySocket.get(socket);
  if (known !== undefined) return known;
  const cert = socket.getPeerX509Certificate();
  let identity: CertificateIdentity | null = null;
  if (cert) {
    const issuer = socket.getPeerCertificate(true)?.issuerCertificate;
    // A presented issuer other than the certificate itself means a chain was sent. Node
    // shows only the certificates that chain up from the leaf, so certificates sent after
    // a self-signed leaf are not seen; they carry no meaning (the leaf's key is the identity).
    const chained = issuer !== undefined && issuer.fingerprint256 !== cert.fingerprint256;
    identity = identityOf(cert, chained ? 2 : 1);
  }
  bySocket.set(socket, identity);
  return identity;
}

const PEM_BLOCK = /-----BEGIN CERTIFICATE-----/g;
const byHeader = new Map<string, CertificateIdentity | null>();

/** The certificate a trusted proxy forwarded as URL-encoded PEM; null when unreadable. */
export function headerIdentity(value: string): CertificateIdentity | null {
  const known = byHeader.get(value);
  if (known !== undefined) return known;
  let identity: CertificateIdentity | null = null;
  try {
    const pem = decodeURIComponent(value);
    identity = identityOf(new X509Certificate(pem), pem.match(PEM_BLOCK)?.length ?? 0);
  } catch {
    identity = null;
  }
  if (byHeader.size >= 10_000) byHeader.delete(byHeader.keys().next().value as string);
  byHeader.set(value, identity);
  return identity;
}
