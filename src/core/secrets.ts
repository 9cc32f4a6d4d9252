import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { randomBase62 } from './ids';

/**
 * Endpoint signing secrets at rest, sealed with AES-256-GCM under a key ring (WEBHOOK_SECRET_ENCRYPTION_KEYS,
 * newest first: the newest seals, every key opens).
 *
 * Stored forms, all of which open:
 * - `enc:v2:<key id>:<base64 iv>:<base64 tag>:<base64 ciphertext>`: what sealing writes. The endpoint id is the
 *   associated data, so a sealed value copied onto another endpoint does not open. The key id (first 8 hex of
 *   the key's SHA-256) names the ring key that opens it; it reveals nothing usable about the key.
 * - `enc:v1:<base64 iv>:<base64 tag>:<base64 ciphertext>`: sealed without key id or associated data; every
 *   key of the ring is tried.
 * - `whsec_...`: plain, written only when no key is configured (development without `npm start`).
 * `secrets reencrypt` moves the older forms onto the newest key.
 */

const V1_PREFIX = 'enc:v1:';
const V2_PREFIX = 'enc:v2:';
const IV_BYTES = 12; // the GCM standard nonce size
const TAG_BYTES = 16;
const KEY_BYTES = 32;

export const SECRET_PREFIX = 'whsec_';

/** The encryption keys, newest first; empty: secrets are stored plain. */
export type KeyRing = readonly Buffer[] & {
  /**
   * WEBHOOK_SECRETS_REQUIRE_SEALED: only `enc:v2` values (sealed under a ring key and bound to their endpoint)
   * open; a plain or `enc:v1` value is refused as if no key opened it.
   */
  readonly sealedOnly?: boolean;
};

/** The ring with the sealed-only rule set. */
export function sealedOnlyRing(keys: readonly Buffer[]): KeyRing {
  return Object.assign([...keys], { sealedOnly: true });
}

/** Whether a stored value is sealed under a key and bound to its endpoint: the only form a sealed-only ring opens. */
function isSealedAndBound(stored: string): boolean {
  return stored.startsWith(V2_PREFIX);
}

export class SecretUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SecretUnavailableError';
  }
}

/** A fresh endpoint signing secret: whsec_ + 32 base62 characters (about 190 bits). */
export function generateSecret(): string {
  return SECRET_PREFIX + randomBase62(32);
}

/** A fresh 32-byte encryption key. */
export function generateEncryptionKey(): Buffer {
  return randomBytes(KEY_BYTES);
}

/**
 * A key written as 64 hex characters or base64 (standard or URL-safe); undefined for anything else. Strict shapes:
 * Buffer.from(_, 'base64') skips characters it does not know, so a mistyped key would quietly become another key,
 * and every secret sealed with the right one would fail to open at delivery.
 */
export function parseEncryptionKey(raw: string): Buffer | undefined {
  if (/^[0-9a-fA-F]{64}$/.test(raw)) return Buffer.from(raw, 'hex');
  if (/^[A-Za-z0-9+/]{43}=?$/.test(raw) || /^[A-Za-z0-9_-]{43}$/.test(raw)) return Buffer.from(raw, 'base64');
  return undefined;
}

/** How a stored value names its key: the first 8 hex of the key's SHA-256. */
export function encryptionKeyId(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 8);
}

export function isSealed(stored: string): boolean {
  return stored.startsWith(V1_PREFIX) || stored.startsWith(V2_PREFIX);
}

/** Whether a stored value is sealed under the ring's newest key, in the current form (nothing to re-encrypt). */
export function isOnNewestKey(stored: string, ring: KeyRing): boolean {
  const newest = ring[0];
  return newest !== undefined && stored.startsWith(`${V2_PREFIX}${encryptionKeyId(newest)}:`);
}

/** Sealed under the ring's newest key, bound to its endpoint; the plain value when the ring is empty. */
export function sealSecret(plain: string, endpointId: string, ring: KeyRing): string {
  const key = ring[0];
  if (!key) return plain;
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(Buffer.from(endpointId, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  const fields = [encryptionKeyId(key), iv, cipher.getAuthTag(), ciphertext];
  return V2_PREFIX + fields.map((field) => (typeof field === 'string' ? field : field.toString('base64'))).join(':');
}

function decrypt(key: Buffer, iv: Buffer, tag: Buffer, ciphertext: Buffer, aad?: string): string | undefined {
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
    if (aad !== undefined) decipher.setAAD(Buffer.from(aad, 'utf8'));
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString('utf8');
  } catch {
    return undefined;
  }
}

const unrecognised = () => new SecretUnavailableError('an endpoint secret is stored in an unrecognised encrypted form');

/** iv, tag and ciphertext from their base64 fields, their sizes checked. */
function binaryFields(fields: string[]): [Buffer, Buffer, Buffer] {
  const [iv, tag, ciphertext] = fields.map((field) => Buffer.from(field, 'base64'));
  if (fields.length !== 3 || !iv || !tag || !ciphertext || iv.length !== IV_BYTES || tag.length !== TAG_BYTES) {
    throw unrecognised();
  }
  return [iv, tag, ciphertext];
}

/**
 * The plain secret of an endpoint; throws SecretUnavailableError (never echoing the value or a key) when no key
 * of the ring opens it.
 */
export function openSecret(stored: string, endpointId: string, ring: KeyRing): string {
  if (ring.sealedOnly && !isSealedAndBound(stored)) {
    throw new SecretUnavailableError(
      `an endpoint secret is stored ${isSealed(stored) ? 'sealed without its endpoint bound' : 'plain'}, which WEBHOOK_SECRETS_REQUIRE_SEALED refuses: run \`secrets reencrypt\``,
    );
  }
  if (!isSealed(stored)) return stored;
  if (ring.length === 0) {
    throw new SecretUnavailableError('an endpoint secret is encrypted but WEBHOOK_SECRET_ENCRYPTION_KEYS is not set');
  }
  if (stored.startsWith(V1_PREFIX)) {
    const [iv, tag, ciphertext] = binaryFields(stored.slice(V1_PREFIX.length).split(':'));
    for (const key of ring) {
      const plain = decrypt(key, iv, tag, ciphertext);
      if (plain !== undefined) return plain;
    }
    throw new SecretUnavailableError(
      'an endpoint secret failed to decrypt: no key of WEBHOOK_SECRET_ENCRYPTION_KEYS opens it, or it was tampered with',
    );
  }
  const [keyId, ...rest] = stored.slice(V2_PREFIX.length).split(':');
  const [iv, tag, ciphertext] = binaryFields(rest);
  const key = ring.find((candidate) => encryptionKeyId(candidate) === keyId);
  if (!key) {
    throw new SecretUnavailableError(
      `an endpoint secret is sealed under key ${keyId}, which WEBHOOK_SECRET_ENCRYPTION_KEYS does not hold`,
    );
  }
  const plain = decrypt(key, iv, tag, ciphertext, endpointId);
  if (plain === undefined) {
    throw new SecretUnavailableError(
      `an endpoint secret failed to decrypt under key ${keyId}: tampered with, or stored on another endpoint`,
    );
  }
  return plain;
}

/**
 * The stored value moved onto the ring's newest key; undefined when it is there already. Every stored form opens
 * here, under a sealed-only ring too: this is how plain and unbound values become sealed.
 */
export function resealSecret(stored: string, endpointId: string, ring: KeyRing): string | undefined {
  if (ring.length === 0 || isOnNewestKey(stored, ring)) return undefined;
  return sealSecret(openSecret(stored, endpointId, [...ring]), endpointId, ring);
}
