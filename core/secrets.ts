import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { randomBase62 } from './ids';

/**
 * Endpoint signing secrets at rest (encrypted when WEBHOOK_SECRET_ENCRYPTION_KEY is set).
 * Stored form: `enc:v1:<base64 iv>:<base64 tag>:<base64 ciphertext>` (AES-256-GCM), or the plain `whsec_...`
 * when no key is configured. A plain value still opens with a key, so encryption can be switched on later.
 */

const SEALED_PREFIX = 'enc:v1:';
const IV_BYTES = 12; // the GCM standard nonce size
const TAG_BYTES = 16;

export const SECRET_PREFIX = 'whsec_';

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

export function isSealed(stored: string): boolean {
  return stored.startsWith(SEALED_PREFIX);
}

export function sealSecret(plain: string, key?: Buffer): string {
  if (!key) return plain;
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const ciphertext = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  const tag = cipher.getAuthTag();
  return `${SEALED_PREFIX}${iv.toString('base64')}:${tag.toString('base64')}:${ciphertext.toString('base64')}`;
}

/** The plain secret; throws SecretUnavailableError (never echoing the value) when it cannot be opened. */
export function openSecret(stored: string, key?: Buffer): string {
  if (!isSealed(stored)) return stored;
  if (!key) {
    throw new SecretUnavailableError(
      'an endpoint secret is encrypted but WEBHOOK_SECRET_ENCRYPTION_KEY is not set',
    );
  }
  const parts = stored.slice(SEALED_PREFIX.length).split(':');
  const [iv, tag, ciphertext] = parts.map((part) => Buffer.from(part, 'base64'));
  if (parts.length !== 3 || !iv || !tag || !ciphertext || iv.length !== IV_BYTES || tag.length !== TAG_BYTES) {
    throw new SecretUnavailableError('an endpoint secret is stored in an unrecognised encrypted form');
  }
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString('utf8');
  } catch {
    throw new SecretUnavailableError(
      'an endpoint secret failed to decrypt: wrong WEBHOOK_SECRET_ENCRYPTION_KEY or tampered data',
    );
  }
}
