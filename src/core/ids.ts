/**
 * Every id we make, prefixed by type as Stripe and Svix do. No node: import, so workflow code can make its
 * attempt ids here too (from its deterministic uuid4()); randomness comes from the global Web Crypto.
 */

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** Uniform base62 string from a CSPRNG (rejection sampling avoids modulo bias). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of crypto.getRandomValues(new Uint8Array(length * 2))) {
      if (byte < 248) out += ALPHABET[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

export const ID_PREFIX = {
  account: 'acct_',
  apiKey: 'key_',
  endpoint: 'we_',
  event: 'evt_',
  /** One ladder of attempts of one event to one endpoint (table deliveries). */
  delivery: 'dly_',
  /** One attempt of a delivery: the `Service-Delivery` header merchants see. */
  attempt: 'dlv_',
  notification: 'ntf_',
  /** One POST /v1/webhooks/:id/recover: the deliveries it stored, spaced in time, that the dispatchers start as each falls due. */
  recovery: 'rcv_',
  /** One change to a key or an endpoint, in the audit log. */
  auditEntry: 'aud_',
} as const;

export type IdKind = keyof typeof ID_PREFIX;

export function newId(kind: IdKind): string {
  return ID_PREFIX[kind] + randomBase62(24);
}

/**
 * A delivery attempt's id, made by the workflow from its replay-safe uuid4(), so an attempt lost with its worker
 * keeps its id: dlv_ + the uuid's 32 hex digits.
 */
export function attemptIdFromUuid(uuid: string): string {
  return ID_PREFIX.attempt + uuid.replace(/-/g, '');
}
