import { createHmac } from 'node:crypto';

/**
 * The Service-Signature scheme: HMAC-SHA-256 keyed with the endpoint secret over `<t>.<raw body>`, hex.
 * Several secrets (rotation grace period) give several v1 chunks in one header.
 */
export function signatureHeader(body: string | Buffer, secrets: string[], timestampSeconds: number): string {
  const chunks = [`t=${timestampSeconds}`];
  for (const secret of secrets) {
    const hmac = createHmac('sha256', secret);
    hmac.update(`${timestampSeconds}.`);
    hmac.update(body);
    chunks.push(`v1=${hmac.digest('hex')}`);
  }
  return chunks.join(',');
}

/**
 * The HMAC key Standard Webhooks verifiers derive from a secret: the base64 decoding of the part after `whsec_`
 * (what `new Webhook(secret)` of the `standardwebhooks` packages does). Our secrets are `whsec_` + 32 base62
 * characters (core/secrets.ts generateSecret): base62 is a subset of the base64 alphabet and 32 is a multiple of
 * 4, so that part is strict, unpadded base64 of 24 bytes, and merchants verify with the secret unchanged.
 */
export function standardWebhooksKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64');
}

/**
 * Standard Webhooks' `webhook-signature`: `v1,<base64 HMAC-SHA-256 over "<id>.<timestamp>.<raw body>">` for each
 * secret, space separated, keyed as standardWebhooksKey says. `id` is the event id (`webhook-id`), the same on
 * every attempt, and `timestampSeconds` the one `webhook-timestamp` carries.
 */
export function standardSignatureHeader(
  id: string,
  body: string | Buffer,
  secrets: string[],
  timestampSeconds: number,
): string {
  return secrets
    .map((secret) => {
      const hmac = createHmac('sha256', standardWebhooksKey(secret));
      hmac.update(`${id}.${timestampSeconds}.`);
      hmac.update(body);
      return `v1,${hmac.digest('base64')}`;
    })
    .join(' ');
}
