import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { generateSecret, isSealed, openSecret, sealSecret, SecretUnavailableError } from '../../../core/secrets';

const key = randomBytes(32);

describe('endpoint secrets at rest', () => {
  it('generates whsec_ + 32 base62 characters, fresh each time', () => {
    const secret = generateSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9]{32}$/);
    expect(generateSecret()).not.toBe(secret);
  });

  it('seals with AES-256-GCM under a random IV and opens again', () => {
    const plain = generateSecret();
    const sealed = sealSecret(plain, key);
    expect(sealed).toMatch(/^enc:v1:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+$/);
    expect(sealed).not.toContain(plain.slice(6));
    expect(isSealed(sealed)).toBe(true);
    expect(sealSecret(plain, key)).not.toBe(sealed);
    expect(openSecret(sealed, key)).toBe(plain);
    const [, , iv, tag] = sealed.split(':');
    expect(Buffer.from(iv as string, 'base64')).toHaveLength(12);
    expect(Buffer.from(tag as string, 'base64')).toHaveLength(16);
  });

  it('stores the plain secret when no key is configured, and still opens it once a key is', () => {
    const plain = generateSecret();
    expect(sealSecret(plain)).toBe(plain);
    expect(openSecret(plain)).toBe(plain);
    expect(openSecret(plain, key)).toBe(plain);
  });

  it('refuses tampered ciphertext, tag or IV, and a wrong key', () => {
    const plain = generateSecret();
    const sealed = sealSecret(plain, key);
    const parts = sealed.split(':');
    const flip = (b64: string) => {
      const bytes = Buffer.from(b64, 'base64');
      bytes[0] = (bytes[0] as number) ^ 1;
      return bytes.toString('base64');
    };
    for (const index of [2, 3, 4]) {
      const tampered = parts.map((part, i) => (i === index ? flip(part) : part)).join(':');
      expect(() => openSecret(tampered, key)).toThrow(SecretUnavailableError);
    }
    expect(() => openSecret(sealed, randomBytes(32))).toThrow(/wrong WEBHOOK_SECRET_ENCRYPTION_KEY or tampered/);
    expect(() => openSecret('enc:v1:garbage', key)).toThrow(SecretUnavailableError);
  });

  it('says clearly when an encrypted secret meets a process without the key, never echoing it', () => {
    const sealed = sealSecret('whsec_abc', key);
    let message = '';
    try {
      openSecret(sealed);
    } catch (err) {
      expect(err).toBeInstanceOf(SecretUnavailableError);
      message = (err as Error).message;
    }
    expect(message).toMatch(/WEBHOOK_SECRET_ENCRYPTION_KEY is not set/);
    expect(message).not.toContain(sealed);
  });
});
