import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Verifies the `Service-Signature` header of a webhook delivery.
 *
 * This file deliberately imports nothing but node:crypto: merchants copy or install it on its own, and the
 * engine's signer (core/signing.ts) is kept honest against it by the shared vectors in
 * test/fixtures/signature-vectors.json rather than by sharing code.
 */

/** How far a signature's timestamp may be from the receiver's clock, in seconds. */
export const DEFAULT_TOLERANCE_SECONDS = 300;

/** Header names as Node lower-cases them (sent as Service-Signature, Service-Event, Service-Delivery). */
export const SIGNATURE_HEADER = 'service-signature';
export const EVENT_TYPE_HEADER = 'service-event';
/** The attempt id (`dlv_...`): differs on every retry, so never deduplicate on it; use the event id. */
export const DELIVERY_ID_HEADER = 'service-delivery';

export type VerificationFailureReason =
  /** No `t=` chunk (an absent or empty header lands here too: it carries nothing to verify). */
  | 'missing_timestamp'
  /** A `t=` but no `v1=` chunk. Chunks of other schemes (e.g. `v0=`) do not count. */
  | 'missing_signature'
  /** The signature is genuine but `t` is more than the tolerance away from now: a replay, or a wrong clock. */
  | 'timestamp_outside_tolerance'
  /** No `v1` equals the HMAC under any configured secret (tampered or re-serialised body, wrong secret). */
  | 'signature_mismatch'
  /** The header cannot be read unambiguously: `t` is not a whole number, `t` appears twice, or a chunk has no `=`. */
  | 'malformed_header'
  /** constructEvent only: the signature is valid but the body is not a JSON event object. */
  | 'invalid_payload';

export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';

  constructor(
    readonly reason: VerificationFailureReason,
    message: string,
  ) {
    super(message);
  }
}

export interface VerifyOptions {
  /** Maximum |now - t| in seconds; default 300. */
  toleranceSeconds?: number;
  /** Current Unix time in seconds; injectable so tests need no real clock. */
  now?: () => number;
}

export interface VerifiedSignature {
  /** The signed `t`, Unix seconds. */
  timestamp: number;
  /** Which of the configured secrets matched: during a rotation this says whether the old one is still in use. */
  matchedSecretIndex: number;
}

export type RawBody = Buffer | Uint8Array | string;
/** Node gives a repeated header as one string joined by ", ", some frameworks as an array; both are accepted. */
export type SignatureHeaderValue = string | readonly string[] | null | undefined;

interface ParsedHeader {
  /** Kept as sent: the HMAC covers the exact characters of `t`, not a re-formatted number. */
  timestampText: string | undefined;
  signatures: string[];
}

function parseHeader(header: SignatureHeaderValue): ParsedHeader {
  const text = Array.isArray(header) ? header.join(',') : typeof header === 'string' ? header : '';
  const parsed: ParsedHeader = { timestampText: undefined, signatures: [] };
  for (const rawChunk of text.split(',')) {
    const chunk = rawChunk.trim();
    // Tolerate stray separators ("t=1,,v1=..", a trailing comma): they carry no meaning to misread.
    if (chunk === '') continue;
    const eq = chunk.indexOf('=');
    if (eq <= 0)
      throw new WebhookVerificationError('malformed_header', 'signature header has a chunk that is not key=value');
    const key = chunk.slice(0, eq).trim();
    const value = chunk.slice(eq + 1).trim();
    if (key === 't') {
      if (parsed.timestampText !== undefined) {
        throw new WebhookVerificationError('malformed_header', 'signature header has more than one timestamp');
      }
      // At most 15 digits keeps the number exact in a double; real Unix seconds have 10.
      if (!/^\d{1,15}$/.test(value)) {
        throw new WebhookVerificationError('malformed_header', 'signature timestamp is not a whole number of seconds');
      }
      parsed.timestampText = value;
    } else if (key === 'v1') {
      parsed.signatures.push(value);
    }
    // Any other key is a scheme this version does not know (e.g. v0=): ignored, so the service can add one later.
  }
  return parsed;
}

function normaliseSecrets(secrets: string | readonly string[]): readonly string[] {
  const list = typeof secrets === 'string' ? [secrets] : secrets;
  // A configuration mistake, not a bad request: a TypeError surfaces it loudly instead of rejecting every delivery.
  if (!Array.isArray(list) || list.length === 0) throw new TypeError('at least one webhook secret is required');
  for (const secret of list) {
    if (typeof secret !== 'string' || secret === '') throw new TypeError('webhook secrets must be non-empty strings');
  }
  return list;
}

function expectedSignature(secret: string, timestampText: string, body: RawBody): Buffer {
  const hmac = createHmac('sha256', secret);
  hmac.update(`${timestampText}.`, 'utf8');
  // A string body is hashed as UTF-8, the encoding the service sends; bytes are hashed as they are.
  if (typeof body === 'string') hmac.update(body, 'utf8');
  else hmac.update(body);
  return Buffer.from(hmac.digest('hex'), 'utf8');
}

/** Constant-time equality of a received `v1` and the expected lowercase hex digest. */
function signaturesEqual(expected: Buffer, received: string): boolean {
  const candidate = Buffer.from(received, 'utf8');
  // timingSafeEqual throws on unequal lengths; a wrong length reveals nothing an attacker did not choose.
  return candidate.length === expected.length && timingSafeEqual(candidate, expected);
}

/**
 * Throws WebhookVerificationError unless `header` carries a valid, timely signature of `rawBody` under one of
 * `secrets`. `rawBody` must be the bytes exactly as received, before any JSON parsing.
 */
export function verifySignature(
  rawBody: RawBody,
  header: SignatureHeaderValue,
  secrets: string | readonly string[],
  options: VerifyOptions = {},
): VerifiedSignature {
  const secretList = normaliseSecrets(secrets);
  const toleranceSeconds = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  if (!(toleranceSeconds >= 0)) throw new TypeError('toleranceSeconds must be a number >= 0');
  if (typeof rawBody !== 'string' && !(rawBody instanceof Uint8Array)) {
    throw new TypeError('rawBody must be the raw request body (Buffer, Uint8Array or string), not a parsed object');
  }

  const { timestampText, signatures } = parseHeader(header);
  if (timestampText === undefined)
    throw new WebhookVerificationError('missing_timestamp', 'signature header has no timestamp (t=)');
  if (signatures.length === 0)
    throw new WebhookVerificationError('missing_signature', 'signature header has no v1 signature');

  // The signature is checked before the clock so that "outside tolerance" is only ever said of a genuine
  // signature: it then points at a replay or a skewed clock, never at a forged timestamp.
  let matchedSecretIndex = -1;
  secretList.forEach((secret, index) => {
    const expected = expectedSignature(secret, timestampText, rawBody);
    for (const received of signatures) {
      if (signaturesEqual(expected, received) && matchedSecretIndex === -1) matchedSecretIndex = index;
    }
  });
  if (matchedSecretIndex === -1) {
    throw new WebhookVerificationError(
      'signature_mismatch',
      'no v1 signature matches the body under the configured secrets',
    );
  }

  const timestamp = Number(timestampText);
  const now = options.now ? options.now() : Math.floor(Date.now() / 1000);
  if (Math.abs(now - timestamp) > toleranceSeconds) {
    throw new WebhookVerificationError(
      'timestamp_outside_tolerance',
      `signature timestamp is more than ${toleranceSeconds} s from now`,
    );
  }
  return { timestamp, matchedSecretIndex };
}
