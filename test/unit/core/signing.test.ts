import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { generateSecret } from '../../../src/core/secrets';
import { signatureHeader, standardSignatureHeader, standardWebhooksKey } from '../../../src/core/signing';
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

  it.each(sentBySender.map((v) => [v.name, v] as const))(
    '%s: signatureHeader reproduces the header',
    (_name, vector) => {
      expect(signatureHeader(vector.body, vector.senderSecrets ?? [], vector.timestamp)).toBe(vector.header);
      expect(signatureHeader(Buffer.from(vector.body, 'utf8'), vector.senderSecrets ?? [], vector.timestamp)).toBe(
        vector.header,
      );
    },
  );

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

describe('Standard Webhooks signature', () => {
  const body = '{"id":"evt_1","object":"event","type":"parcel.created"}';

  it('is verified by the standardwebhooks package with the secret as merchants hold it, for generated secrets', () => {
    for (let i = 0; i < 50; i += 1) {
      const secret = generateSecret();
      const t = Math.floor(Date.now() / 1000);
      const headers = {
        'webhook-id': 'evt_1',
        'webhook-timestamp': String(t),
        'webhook-signature': standardSignatureHeader('evt_1', body, [secret], t),
      };
      expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    }
  });

  it('keys with the base64 decoding of the part after whsec_ (24 bytes for our 32 base62 characters)', () => {
    const secret = generateSecret();
    expect(standardWebhooksKey(secret)).toHaveLength(24);
    expect(standardWebhooksKey(secret).toString('base64')).toBe(secret.slice('whsec_'.length));
  });

  it('carries one v1 per secret, space separated, each verifying alone; a wrong secret or body fails', () => {
    const [current, previous] = [generateSecret(), generateSecret()];
    const t = Math.floor(Date.now() / 1000);
    const header = standardSignatureHeader('evt_2', body, [current, previous], t);
    expect(header).toMatch(/^v1,[A-Za-z0-9+/]{43}= v1,[A-Za-z0-9+/]{43}=$/);
    const headers = { 'webhook-id': 'evt_2', 'webhook-timestamp': String(t), 'webhook-signature': header };
    expect(() => new Webhook(current).verify(body, headers)).not.toThrow();
    expect(() => new Webhook(previous).verify(body, headers)).not.toThrow();
    expect(() => new Webhook(generateSecret()).verify(body, headers)).toThrow();
    expect(() => new Webhook(current).verify(`${body} `, headers)).toThrow();
    expect(() => new Webhook(current).verify(body, { ...headers, 'webhook-id': 'evt_3' })).toThrow();
  });
});
