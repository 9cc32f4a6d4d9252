import type { ParcelEvent } from './types.js';
import {
  verifySignature,
  WebhookVerificationError,
  type RawBody,
  type SignatureHeaderValue,
  type VerifiedSignature,
  type VerifyOptions,
} from './verify.js';

export interface ConstructedEvent {
  event: ParcelEvent;
  signature: VerifiedSignature;
}

/** The envelope only: the engine checked each kind's data against its schema before signing it. */
function isEventObject(value: unknown): value is ParcelEvent {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const record = value as Record<string, unknown>;
  return (
    typeof record.id === 'string' &&
    record.id !== '' &&
    record.object === 'event' &&
    typeof record.type === 'string' &&
    typeof record.created === 'number' &&
    typeof record.data === 'object' &&
    record.data !== null
  );
}

/**
 * Verifies the signature, then parses the body. Parsing comes second on purpose: nothing from an unverified
 * body is ever interpreted. Throws WebhookVerificationError (`invalid_payload` when a correctly signed body is
 * not an event object, which only a misconfigured sender would produce). The event is typed as `ParcelEvent`:
 * narrow it on `type`.
 */
export function constructEventWithSignature(
  rawBody: RawBody,
  header: SignatureHeaderValue,
  secrets: string | readonly string[],
  options: VerifyOptions = {},
): ConstructedEvent {
  const signature = verifySignature(rawBody, header, secrets, options);
  const text =
    typeof rawBody === 'string'
      ? rawBody
      : Buffer.from(rawBody.buffer, rawBody.byteOffset, rawBody.byteLength).toString('utf8');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new WebhookVerificationError('invalid_payload', 'signed body is not valid JSON');
  }
  if (!isEventObject(parsed)) {
    throw new WebhookVerificationError(
      'invalid_payload',
      'signed body is not an event object (id, object, type, created, data)',
    );
  }
  return { event: parsed, signature };
}

/** constructEventWithSignature for callers who only want the event. */
export function constructEvent(
  rawBody: RawBody,
  header: SignatureHeaderValue,
  secrets: string | readonly string[],
  options: VerifyOptions = {},
): ParcelEvent {
  return constructEventWithSignature(rawBody, header, secrets, options).event;
}
