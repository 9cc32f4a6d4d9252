import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The signature check written again from the scheme as merchants read it (src/receiver/README.md), independent of src/core/signing.ts and src/receiver/: a delivery is
 * verified the way a merchant who never saw our code would verify it.
 */
export function independentlyVerified(
  header: string | string[] | undefined,
  rawBody: Buffer,
  secret: string,
  toleranceS = 300,
): boolean {
  if (typeof header !== 'string') return false;
  const parts = header.split(',').map((chunk) => chunk.split('=', 2) as [string, string]);
  const t = parts.find(([k]) => k === 't')?.[1];
  const v1s = parts.filter(([k]) => k === 'v1').map(([, v]) => v);
  if (!t || v1s.length === 0 || Math.abs(Date.now() / 1000 - Number(t)) > toleranceS) return false;
  const expected = createHmac('sha256', secret)
    .update(Buffer.concat([Buffer.from(`${t}.`), rawBody]))
    .digest();
  return v1s.some((v) => {
    const given = Buffer.from(v, 'hex');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
