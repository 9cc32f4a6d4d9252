import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { signatureHeader } from '../../../core/signing';
import { buildVectors, VECTORS_PATH, type SignatureVector } from '../../../scripts/generate-signature-vectors';

// The sender's side of the shared vectors; test/unit/verify.test.ts is the receiver's side of the same file.
const vectors = JSON.parse(readFileSync(VECTORS_PATH, 'utf8')) as SignatureVector[];
const sentBySender = vectors.filter((v) => v.senderSecrets !== undefined);

describe('sender signature vectors', () => {
  it('the committed vectors are what the generator produces (regenerate with scripts/generate-signature-vectors.ts)', () => {
    expect(vectors).toEqual(buildVectors());
  });

  it('covers single-secret and rotation headers', () => {
    expect(sentBySender.length).toBeGreaterThanOrEqual(8);
    expect(sentBySender.some((v) => (v.senderSecrets?.length ?? 0) > 1)).toBe(true);
  });

  it.each(sentBySender.map((v) => [v.name, v] as const))('%s: signatureHeader reproduces the header', (_name, vector) => {
    expect(signatureHeader(vector.body, vector.senderSecrets ?? [], vector.timestamp)).toBe(vector.header);
    expect(signatureHeader(Buffer.from(vector.body, 'utf8'), vector.senderSecrets ?? [], vector.timestamp)).toBe(vector.header);
  });

  it('emits one v1 per secret, in the order given (current, then previous during a rotation)', () => {
    const rotation = sentBySender.find((v) => (v.senderSecrets?.length ?? 0) === 2) as SignatureVector;
    const [currentSecret, previousSecret] = rotation.senderSecrets as [string, string];
    const [t, v1Current, v1Previous] = rotation.header.split(',');
    expect(t).toBe(`t=${rotation.timestamp}`);
    expect(`${t},${v1Current}`).toBe(signatureHeader(rotation.body, [currentSecret], rotation.timestamp));
    expect(`${t},${v1Previous}`).toBe(signatureHeader(rotation.body, [previousSecret], rotation.timestamp));
  });

  it('emits lowercase hex only, which the receiver compares exactly', () => {
    for (const v of sentBySender) expect(v.header).toMatch(/^t=\d+(,v1=[0-9a-f]{64})+$/);
  });
});
