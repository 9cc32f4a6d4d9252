import type { WebhookEvent } from './types';
import {
  verifySignature,
  WebhookVerificationError,
  type RawBody,
  type SignatureHeaderValue,
  type VerifiedSignature,
  type VerifyOptions,
} from './verify';

export interface ConstructedEvent<TEvent extends WebhookEvent<object>> {
  event: TEvent;
  signature: VerifiedSignature;
}

function isEventObject(value: unknown): value is WebhookEvent {
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
 * not an event object, which only a misconfigured sender would produce).
 */
export function constructEventWithSignature<TEvent extends WebhookEvent<object> = WebhookEvent>(
  rawBody: RawBody,
  header: SignatureHeaderValue,
  secrets: string | readonly string[],
  options: VerifyOptions = {},
): ConstructedEvent<TEvent> {
  const signature = verifySignature(rawBody, header, secrets, options);
  const text = typeof rawBody === 'string' ? rawBody : Buffer.from(rawBody.buffer, rawBody.byteOffset, rawBody.byteLength).toString('utf8');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new WebhookVerificationError('invalid_payload', 'signed body is not valid JSON');
  }
  if (!isEventObject(parsed)) {
    throw new WebhookVerificationError('invalid_payload', 'signed body is not an event object (id, object, type, created, data)');
  }
  return { event: parsed as TEvent, signature };
}

/** constructEventWithSignature for callers who only want the event. */
export function constructEvent<TEvent extends WebhookEvent<object> = WebhookEvent>(
  rawBody: RawBody,
  header: SignatureHeaderValue,
  secrets: string | readonly string[],
  options: VerifyOptions = {},
): TEvent {
  return constructEventWithSignature<TEvent>(rawBody, header, secrets, options).event;
}
