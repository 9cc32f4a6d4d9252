import { createCipheriv, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  encryptionKeyId,
  generateSecret,
  isOnNewestKey,
  isSealed,
  openSecret,
  parseEncryptionKey,
  resealSecret,
  sealedOnlyRing,
  sealSecret,
  SecretUnavailableError,
} from '../../../src/core/secrets';

const key = randomBytes(32);
const older = randomBytes(32);
const ENDPOINT = 'we_secretsUnitTest';

/** The v1 stored form, which still opens: `enc:v1:<iv>:<tag>:<ciphertext>`, no key id, no associated data. */
function sealV1(plain: string, under: Buffer): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', under, iv);
  const ciphertext = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return `enc:v1:${iv.toString('base64')}:${cipher.getAuthTag().toString('base64')}:${ciphertext.toString('base64')}`;
}

const thrown = (fn: () => unknown): Error => {
  try {
    fn();
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a throw');
};

describe('endpoint secrets at rest', () => {
  it('generates whsec_ + 32 base62 characters, fresh each time', () => {
    const secret = generateSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9]{32}$/);
    expect(generateSecret()).not.toBe(secret);
  });

  it('seals with AES-256-GCM under a random IV, naming the key by the first 8 hex of its SHA-256', () => {
    const plain = generateSecret();
    const sealed = sealSecret(plain, ENDPOINT, [key]);
    expect(encryptionKeyId(key)).toMatch(/^[0-9a-f]{8}$/);
    expect(sealed.startsWith(`enc:v2:${encryptionKeyId(key)}:`)).toBe(true);
    expect(sealed).toMatch(/^enc:v2:[0-9a-f]{8}:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+$/);
    expect(sealed).not.toContain(plain.slice(6));
    expect(isSealed(sealed)).toBe(true);
    expect(sealSecret(plain, ENDPOINT, [key])).not.toBe(sealed);
    expect(openSecret(sealed, ENDPOINT, [key])).toBe(plain);
    const [, , , iv, tag] = sealed.split(':');
    expect(Buffer.from(iv as string, 'base64')).toHaveLength(12);
    expect(Buffer.from(tag as string, 'base64')).toHaveLength(16);
  });

  it('binds the ciphertext to its endpoint: copied onto another endpoint it does not open', () => {
    const sealed = sealSecret(generateSecret(), ENDPOINT, [key]);
    expect(() => openSecret(sealed, 'we_another', [key])).toThrow(SecretUnavailableError);
    expect(() => openSecret(sealed, 'we_another', [key])).toThrow(/stored on another endpoint/);
  });

  it('seals with the newest key of a ring and opens with any key the ring holds', () => {
    const plain = generateSecret();
    const underOlder = sealSecret(plain, ENDPOINT, [older]);
    const ring = [key, older];
    expect(openSecret(underOlder, ENDPOINT, ring)).toBe(plain);
    expect(sealSecret(plain, ENDPOINT, ring).startsWith(`enc:v2:${encryptionKeyId(key)}:`)).toBe(true);
    expect(thrown(() => openSecret(underOlder, ENDPOINT, [key])).message).toMatch(
      new RegExp(`sealed under key ${encryptionKeyId(older)}, which WEBHOOK_SECRET_ENCRYPTION_KEYS does not hold`),
    );
  });

  it('still opens the older forms: plain whsec_ values and values sealed without key id or associated data', () => {
    const plain = generateSecret();
    expect(sealSecret(plain, ENDPOINT, [])).toBe(plain);
    expect(openSecret(plain, ENDPOINT, [])).toBe(plain);
    expect(openSecret(plain, ENDPOINT, [key])).toBe(plain);
    const v1 = sealV1(plain, older);
    expect(isSealed(v1)).toBe(true);
    expect(openSecret(v1, ENDPOINT, [key, older])).toBe(plain);
    expect(() => openSecret(v1, ENDPOINT, [key])).toThrow(/no key of WEBHOOK_SECRET_ENCRYPTION_KEYS opens it/);
  });

  it('a sealed-only ring opens enc:v2 values only, and resealing still moves the older forms onto it', () => {
    const plain = generateSecret();
    const ring = sealedOnlyRing([key, older]);
    expect(openSecret(sealSecret(plain, ENDPOINT, [older]), ENDPOINT, ring)).toBe(plain);
    expect(() => openSecret(plain, ENDPOINT, ring)).toThrow(SecretUnavailableError);
    expect(thrown(() => openSecret(plain, ENDPOINT, ring)).message).toMatch(
      /stored plain, which WEBHOOK_SECRETS_REQUIRE_SEALED refuses/,
    );
    expect(thrown(() => openSecret(plain, ENDPOINT, ring)).message).not.toContain(plain);
    expect(() => openSecret(sealV1(plain, older), ENDPOINT, ring)).toThrow(/sealed without its endpoint bound/);
    for (const stored of [plain, sealV1(plain, older)]) {
      expect(openSecret(resealSecret(stored, ENDPOINT, ring) as string, ENDPOINT, ring)).toBe(plain);
    }
  });

  it('reseals onto the newest key only what is not there yet', () => {
    const plain = generateSecret();
    const ring = [key, older];
    for (const stored of [plain, sealV1(plain, older), sealSecret(plain, ENDPOINT, [older])]) {
      expect(isOnNewestKey(stored, ring)).toBe(false);
      const moved = resealSecret(stored, ENDPOINT, ring) as string;
      expect(isOnNewestKey(moved, ring)).toBe(true);
      expect(openSecret(moved, ENDPOINT, [key])).toBe(plain);
    }
    expect(resealSecret(sealSecret(plain, ENDPOINT, ring), ENDPOINT, ring)).toBeUndefined();
    expect(resealSecret(plain, ENDPOINT, [])).toBeUndefined();
  });

  it('refuses tampered ciphertext, tag or IV, and a wrong key', () => {
    const sealed = sealSecret(generateSecret(), ENDPOINT, [key]);
    const parts = sealed.split(':');
    const flip = (b64: string) => {
      const bytes = Buffer.from(b64, 'base64');
      bytes[0] = (bytes[0] as number) ^ 1;
      return bytes.toString('base64');
    };
    for (const index of [3, 4, 5]) {
      const tampered = parts.map((part, i) => (i === index ? flip(part) : part)).join(':');
      expect(() => openSecret(tampered, ENDPOINT, [key])).toThrow(SecretUnavailableError);
    }
    expect(() => openSecret(sealed, ENDPOINT, [randomBytes(32)])).toThrow(SecretUnavailableError);
    expect(() => openSecret('enc:v1:garbage', ENDPOINT, [key])).toThrow(/unrecognised encrypted form/);
    expect(() => openSecret('enc:v2:0011aabb:garbage', ENDPOINT, [key])).toThrow(/unrecognised encrypted form/);
  });

  it('says clearly when an encrypted secret meets a process without keys, never echoing it or a key', () => {
    const sealed = sealSecret('whsec_abc', ENDPOINT, [key]);
    const error = thrown(() => openSecret(sealed, ENDPOINT, []));
    expect(error).toBeInstanceOf(SecretUnavailableError);
    expect(error.message).toMatch(/WEBHOOK_SECRET_ENCRYPTION_KEYS is not set/);
    expect(error.message).not.toContain(sealed);
    const wrong = thrown(() => openSecret(sealed, ENDPOINT, [older]));
    expect(wrong.message).not.toContain(older.toString('hex'));
    expect(wrong.message).not.toContain(key.toString('hex'));
  });

  it('reads keys as 64 hex characters or base64 only', () => {
    expect(parseEncryptionKey(key.toString('hex'))).toEqual(key);
    expect(parseEncryptionKey(key.toString('base64'))).toEqual(key);
    expect(parseEncryptionKey(key.toString('base64url'))).toEqual(key);
    expect(parseEncryptionKey('short')).toBeUndefined();
    expect(parseEncryptionKey(`${'A'.repeat(43)}!=`)).toBeUndefined();
  });
});
