import { RETRY_AFTER_MAX_MS } from './delivery-policy';

/** Answers whose Retry-After is honoured: too many requests, and service unavailable. */
export function honoursRetryAfter(statusCode: number | null): boolean {
  return statusCode === 429 || statusCode === 503;
}

/**
 * A Retry-After header (RFC 9110 10.2.3) as a delay in ms from `nowMs`, the time of the answer: delta-seconds
 * (`120`) or an HTTP date (`Wed, 21 Oct 2026 07:28:00 GMT`), capped at RETRY_AFTER_MAX_MS. Undefined when the
 * header is absent, unreadable, negative, or names a time already past: the ladder alone decides then.
 */
export function parseRetryAfter(header: string | string[] | undefined, nowMs: number): number | undefined {
  const value = (Array.isArray(header) ? header[0] : header)?.trim();
  if (!value) return undefined;
  let delayMs: number;
  if (/^\d+$/.test(value)) {
    delayMs = Number(value) * 1000;
  } else {
    // Only a date with letters in it: Date.parse also reads bare numbers such as "-5" or "1.5" as dates.
    if (!/[A-Za-z]/.test(value)) return undefined;
    const at = Date.parse(value);
    if (Number.isNaN(at)) return undefined;
    delayMs = at - nowMs;
  }
  if (!(delayMs > 0)) return undefined;
  return Math.min(delayMs, RETRY_AFTER_MAX_MS);
}
