import { createPrivateKey, generateKeyPairSync, randomBytes, sign, X509Certificate } from 'node:crypto';

/**
 * A throwaway TLS certificate for `listen`: a self-signed P-256 certificate for 127.0.0.1 and ::1, valid for one
 * day, made with node:crypto alone (Node has no certificate builder; a dependency for ~80 lines of DER is not
 * worth it). The worker trusts exactly this certificate for exactly the session's endpoint (pinned), so the
 * loopback exception reaches only the listen process: any other service on that port fails the handshake before
 * a byte of the event is sent.
 */

export interface SessionCertificate {
  /** PEM certificate: what the endpoint row pins. */
  cert: string;
  /** PEM PKCS#8 private key: stays in the listen process's memory. */
  key: string;
}

// ---- minimal DER encoding ------------------------------------------------------------------------------------

function length(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v >>= 8) bytes.unshift(v & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

const tlv = (tag: number, body: Buffer): Buffer => Buffer.concat([Buffer.from([tag]), length(body.length), body]);
const seq = (...items: Buffer[]): Buffer => tlv(0x30, Buffer.concat(items));
const set = (...items: Buffer[]): Buffer => tlv(0x31, Buffer.concat(items));
const octets = (body: Buffer): Buffer => tlv(0x04, body);
const utf8 = (text: string): Buffer => tlv(0x0c, Buffer.from(text, 'utf8'));
const bool = (value: boolean): Buffer => tlv(0x01, Buffer.from([value ? 0xff : 0]));
const bits = (body: Buffer): Buffer => tlv(0x03, Buffer.concat([Buffer.from([0]), body]));
const explicit = (n: number, body: Buffer): Buffer => tlv(0xa0 + n, body);

function oid(dotted: string): Buffer {
  const [a, b, ...rest] = dotted.split('.').map(Number) as [number, number, ...number[]];
  const out = [40 * a + b];
  for (const n of rest) {
    const chunk = [n & 0x7f];
    for (let v = n >> 7; v > 0; v >>= 7) chunk.unshift(0x80 | (v & 0x7f));
    out.push(...chunk);
  }
  return tlv(0x06, Buffer.from(out));
}

/**
 * A random positive serial of 16 bytes whose first byte is neither 0x00 nor has its top bit set, so its DER
 * INTEGER needs no padding byte and has none that is illegal (a leading 0x00 before a byte under 0x80).
 */
function serialNumber(): Buffer {
  const serial = randomBytes(16);
  serial[0] = ((serial[0] as number) & 0x7f) | 0x01;
  return serial;
}

function integer(bytes: Buffer): Buffer {
  // Positive: a leading 1 bit would read as negative.
  return tlv(0x02, (bytes[0] as number) & 0x80 ? Buffer.concat([Buffer.from([0]), bytes]) : bytes);
}

/** UTCTime, good until 2049 (YYMMDDHHMMSSZ). */
function utcTime(date: Date): Buffer {
  const iso = date.toISOString(); // 2026-01-02T03:04:05.678Z
  const text =
    iso.slice(2, 4) +
    iso.slice(5, 7) +
    iso.slice(8, 10) +
    iso.slice(11, 13) +
    iso.slice(14, 16) +
    iso.slice(17, 19) +
    'Z';
  return tlv(0x17, Buffer.from(text, 'ascii'));
}

const ECDSA_WITH_SHA256 = seq(oid('1.2.840.10045.4.3.2'));

function name(commonName: string): Buffer {
  return seq(set(seq(oid('2.5.4.3'), utf8(commonName))));
}

function extensions(): Buffer {
  const loopback = Buffer.concat([
    tlv(0x87, Buffer.from([127, 0, 0, 1])), // iPAddress 127.0.0.1
    tlv(0x87, Buffer.concat([Buffer.alloc(15), Buffer.from([1])])), // iPAddress ::1
  ]);
  return explicit(
    3,
    seq(
      seq(oid('2.5.29.19'), bool(true), octets(seq())), // basicConstraints: critical, not a CA
      seq(oid('2.5.29.17'), octets(seq(loopback))), // subjectAltName
      seq(oid('2.5.29.37'), octets(seq(oid('1.3.6.1.5.5.7.3.1')))), // extKeyUsage: serverAuth
    ),
  );
}

export function createSessionCertificate(now = new Date()): SessionCertificate {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const subject = name('parcel-webhooks listen');
  const tbs = seq(
    explicit(0, integer(Buffer.from([2]))), // v3
    integer(serialNumber()),
    ECDSA_WITH_SHA256,
    subject,
    seq(utcTime(new Date(now.getTime() - 60_000)), utcTime(new Date(now.getTime() + 86_400_000))),
    subject,
    publicKey.export({ type: 'spki', format: 'der' }),
    extensions(),
  );
  const signature = sign('sha256', tbs, privateKey);
  const der = seq(tbs, ECDSA_WITH_SHA256, bits(signature));
  const cert = `-----BEGIN CERTIFICATE-----\n${der
    .toString('base64')
    .match(/.{1,64}/g)!
    .join('\n')}\n-----END CERTIFICATE-----\n`;
  // Parsing it back proves it well-formed before anyone pins it.
  new X509Certificate(cert);
  return {
    cert,
    key: createPrivateKey(privateKey.export({ type: 'pkcs8', format: 'pem' })).export({
      type: 'pkcs8',
      format: 'pem',
    }) as string,
  };
}
