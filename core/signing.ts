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
