// Linkerd's trust anchor and identity issuer, generated per install. A Helm install of Linkerd
// cannot generate them itself and all certificates must use ECDSA P-256 ("Generating your own mTLS
// root certificates", https://linkerd.io/2/tasks/generate-certificates/): a root named
// root.linkerd.cluster.local, and an intermediate CA named identity.linkerd.cluster.local signed by
// it, valid 8760 h in the docs' example, passed as the chart values identityTrustAnchorsPEM,
// identity.issuer.tls.crtPEM and identity.issuer.tls.keyPEM.
//
// node:crypto makes the keys and signs, and parses certificates (X509Certificate), but cannot build
// one; no X.509 builder is among the project's dependencies, so the few DER structures of RFC 5280
// a CA certificate needs are written out here. X509Certificate and `openssl verify` check the result
// in the tests.

import { createHash, createPrivateKey, generateKeyPairSync, randomBytes, sign, X509Certificate, type KeyObject } from 'node:crypto';

export const TRUST_ANCHOR_NAME = 'root.linkerd.cluster.local';
export const ISSUER_NAME = 'identity.linkerd.cluster.local';
const HOUR_MS = 3_600_000;
/** The docs' example issuer lifetime (--not-after 8760h); the anchor outlives it tenfold (their 87600h example). */
export const ISSUER_VALIDITY_MS = 8_760 * HOUR_MS;
export const ANCHOR_VALIDITY_MS = 87_600 * HOUR_MS;

// --- DER (X.690), only what a certificate needs ---
const tlv = (tag: number, body: Buffer): Buffer => {
  const n = body.length;
  const length = n < 0x80 ? Buffer.from([n]) : n < 0x100 ? Buffer.from([0x81, n]) : Buffer.from([0x82, n >> 8, n & 0xff]);
  return Buffer.concat([Buffer.from([tag]), length, body]);
};
const seq = (...items: Buffer[]) => tlv(0x30, Buffer.concat(items));
const set = (...items: Buffer[]) => tlv(0x31, Buffer.concat(items));
const octets = (b: Buffer) => tlv(0x04, b);
const bits = (b: Buffer, unused = 0) => tlv(0x03, Buffer.concat([Buffer.from([unused]), b]));
const bool = (v: boolean) => tlv(0x01, Buffer.from([v ? 0xff : 0x00]));
const explicit = (n: number, b: Buffer) => tlv(0xa0 + n, b);
function integer(b: Buffer): Buffer {
  let i = 0;
  while (i < b.length - 1 && b[i] === 0) i++;
  const trimmed = b.subarray(i);
  // A positive INTEGER whose first bit is set needs a leading zero byte.
  return tlv(0x02, (trimmed[0] ?? 0) & 0x80 ? Buffer.concat([Buffer.from([0]), trimmed]) : trimmed);
}
function oid(dotted: string): Buffer {
  const [a = 0, b = 0, ...rest] = dotted.split('.').map(Number);
  const out = [40 * a + b];
  for (const arc of rest) {
    const chunk = [arc & 0x7f];
    for (let v = arc >> 7; v > 0; v >>= 7) chunk.unshift((v & 0x7f) | 0x80);
    out.push(...chunk);
  }
  return tlv(0x06, Buffer.from(out));
}
function time(d: Date): Buffer {
  // RFC 5280 4.1.2.5: UTCTime through 2049, GeneralizedTime from 2050.
  const iso = d.toISOString().replace(/[-:T]/g, '').slice(0, 14) + 'Z';
  return d.getUTCFullYear() < 2050 ? tlv(0x17, Buffer.from(iso.slice(2))) : tlv(0x18, Buffer.from(iso));
}

const OID = {
  commonName: '2.5.4.3',
  ecdsaWithSha256: '1.2.840.10045.4.3.2',
  basicConstraints: '2.5.29.19',
  keyUsage: '2.5.29.15',
  subjectKeyIdentifier: '2.5.29.14',
  authorityKeyIdentifier: '2.5.29.35',
  subjectAltName: '2.5.29.17',
};

const name = (cn: string) => seq(set(seq(oid(OID.commonName), tlv(0x0c, Buffer.from(cn, 'utf8')))));
const extension = (id: string, critical: boolean, value: Buffer) => seq(oid(id), ...(critical ? [bool(true)] : []), octets(value));

/** RFC 5280 4.2.1.2 method (1): SHA-1 of the subjectPublicKey bits. */
function keyId(key: KeyObject): Buffer {
  const spki = key.export({ type: 'spki', format: 'der' });
  // For a P-256 key the BIT STRING is the last 66 bytes: 0x03 0x42 0x00 and the 65-byte point.
  return createHash('sha1').update(spki.subarray(spki.length - 65)).digest();
}

export interface CertificateSpec {
  subject: string;
  issuer: string;
  publicKey: KeyObject;
  signingKey: KeyObject;
  issuerPublicKey: KeyObject;
  notBefore: Date;
  notAfter: Date;
  /** basicConstraints pathLenConstraint: how many CAs may follow this one; undefined for a certificate that is no CA. */
  pathLength: number | undefined;
}

/** One certificate, signed by `signingKey` (exported for the tests' broken chains). */
export function certificate(spec: CertificateSpec): string {
  const serial = randomBytes(16);
  serial[0] = (serial[0] ?? 0) & 0x7f;
  const algorithm = seq(oid(OID.ecdsaWithSha256));
  const tbs = seq(
    explicit(0, integer(Buffer.from([2]))), // v3
    integer(serial),
    algorithm,
    name(spec.issuer),
    seq(time(spec.notBefore), time(spec.notAfter)),
    name(spec.subject),
    spec.publicKey.export({ type: 'spki', format: 'der' }),
    explicit(
      3,
      seq(
        extension(OID.basicConstraints, true, spec.pathLength === undefined ? seq() : seq(bool(true), integer(Buffer.from([spec.pathLength])))),
        // keyCertSign (bit 5) and cRLSign (bit 6): 0b0000_0110, one unused trailing bit.
        extension(OID.keyUsage, true, bits(Buffer.from([0x06]), 1)),
        extension(OID.subjectKeyIdentifier, false, octets(keyId(spec.publicKey))),
        extension(OID.authorityKeyIdentifier, false, seq(tlv(0x80, keyId(spec.issuerPublicKey)))),
        extension(OID.subjectAltName, false, seq(tlv(0x82, Buffer.from(spec.subject)))),
      ),
    ),
  );
  const signature = sign('sha256', tbs, { key: spec.signingKey, dsaEncoding: 'der' });
  const der = seq(tbs, algorithm, bits(signature));
  return `-----BEGIN CERTIFICATE-----\n${der.toString('base64').replace(/(.{64})/g, '$1\n').replace(/\n$/, '')}\n-----END CERTIFICATE-----\n`;
}

export interface LinkerdIdentity {
  /** identityTrustAnchorsPEM */
  trustAnchorPEM: string;
  /** identity.issuer.tls.crtPEM */
  issuerCertPEM: string;
  /** identity.issuer.tls.keyPEM: SEC1 "EC PRIVATE KEY", the form `openssl ecparam -genkey` writes. */
  issuerKeyPEM: string;
}

/** A fresh trust anchor and issuer, both ECDSA P-256, valid from a minute before `now` (clock skew). */
export function linkerdIdentity(now = new Date()): LinkerdIdentity {
  const anchor = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const issuer = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const notBefore = new Date(now.getTime() - 60_000);
  const trustAnchorPEM = certificate({
    subject: TRUST_ANCHOR_NAME,
    issuer: TRUST_ANCHOR_NAME,
    publicKey: anchor.publicKey,
    signingKey: anchor.privateKey,
    issuerPublicKey: anchor.publicKey,
    notBefore,
    notAfter: new Date(now.getTime() + ANCHOR_VALIDITY_MS),
    pathLength: 1,
  });
  const issuerCertPEM = certificate({
    subject: ISSUER_NAME,
    issuer: TRUST_ANCHOR_NAME,
    publicKey: issuer.publicKey,
    signingKey: anchor.privateKey,
    issuerPublicKey: anchor.publicKey,
    notBefore,
    notAfter: new Date(now.getTime() + ISSUER_VALIDITY_MS),
    pathLength: 0,
  });
  return { trustAnchorPEM, issuerCertPEM, issuerKeyPEM: issuer.privateKey.export({ type: 'sec1', format: 'pem' }) as string };
}

/**
 * What is wrong with an identity for Linkerd, as a list (empty when it is fit): the chain, the key
 * type, the CA flags, the names and the validity at `now`. Checked before the values reach a chart,
 * so that a bad certificate is a clear error here and not a control plane that never starts.
 */
export function linkerdIdentityProblems(identity: LinkerdIdentity, now = new Date()): string[] {
  const problems: string[] = [];
  let anchor: X509Certificate;
  let issuer: X509Certificate;
  try {
    anchor = new X509Certificate(identity.trustAnchorPEM);
    issuer = new X509Certificate(identity.issuerCertPEM);
  } catch (err) {
    return [`not a certificate: ${(err as Error).message}`];
  }
  for (const [what, cert, cn] of [['trust anchor', anchor, TRUST_ANCHOR_NAME], ['issuer', issuer, ISSUER_NAME]] as const) {
    const curve = cert.publicKey.asymmetricKeyDetails?.namedCurve;
    if (cert.publicKey.asymmetricKeyType !== 'ec' || curve !== 'prime256v1') problems.push(`${what}: key is ${cert.publicKey.asymmetricKeyType ?? '?'} ${curve ?? ''}, Linkerd needs ECDSA P-256`.replace('  ', ' '));
    if (!cert.ca) problems.push(`${what}: not a CA certificate`);
    if (cert.subject !== `CN=${cn}`) problems.push(`${what}: subject is ${cert.subject}, expected CN=${cn}`);
    if (new Date(cert.validFrom) > now || new Date(cert.validTo) <= now) problems.push(`${what}: not valid now (${cert.validFrom} to ${cert.validTo})`);
  }
  if (!anchor.verify(anchor.publicKey)) problems.push('trust anchor: not self-signed');
  if (!issuer.checkIssued(anchor) || !issuer.verify(anchor.publicKey)) problems.push('issuer: not signed by the trust anchor');
  try {
    if (!issuer.checkPrivateKey(createPrivateKey(identity.issuerKeyPEM))) problems.push("issuer: the key is not the certificate's");
  } catch (err) {
    problems.push(`issuer key: ${(err as Error).message}`);
  }
  return problems;
}
