import { createHash } from 'node:crypto';
import { ApiError } from './errors';
import { randomBase62 } from './ids';

export type KeyMode = 'test' | 'live';

/** DESIGN.md: `svc_test_` or `svc_live_` + 32 characters [A-Za-z0-9]; anything else is malformed. */
export const API_KEY_PATTERN = /^svc_(test|live)_[A-Za-z0-9]{32}$/;
/** Longest string worth looking at as a key: anything longer is malformed without further work. */
export const API_KEY_LENGTH = 'svc_test_'.length + 32;

/** 32 base62 characters from a CSPRNG: about 190 bits, beyond guessing. */
export function generateApiKey(mode: KeyMode): string {
  return `svc_${mode}_${randomBase62(32)}`;
}

/**
 * A plain SHA-256 is enough: the key carries ~190 random bits, so no slow hash or salt is needed against
 * brute force, and a fast hash keeps authentication to one indexed lookup.
 */
export function hashApiKey(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest();
}

export function keyMode(key: string): KeyMode | undefined {
  const match = API_KEY_PATTERN.exec(key);
  return match ? (match[1] as KeyMode) : undefined;
}

export function keyLast4(key: string): string {
  return key.slice(-4);
}

/** How a key is shown after creation: its mode prefix and last four, never more. */
export function redactedKey(mode: KeyMode, last4: string): string {
  return `svc_${mode}_...${last4}`;
}

export function parseKeyMode(input: string): KeyMode {
  const mode = input.trim().toLowerCase();
  if (mode === 'test' || mode === 'live') return mode;
  throw new ApiError('parameter_invalid', `Invalid mode ${JSON.stringify(input)}: use test or live.`, { param: 'mode' });
}

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/i;

/**
 * An ISO 8601 date (`2026-01-31`, midnight UTC) or date-time. A date-time without an offset is read as UTC,
 * not the operator's local time, so the same command gives the same expiry on every machine. Impossible
 * calendar dates (2026-02-30) are refused rather than rolled over. A past date is allowed: the key is born
 * expired, which is what one wants to try expiry handling.
 */
export function parseExpiry(input: string): Date {
  const text = input.trim();
  const match = ISO_DATE.exec(text);
  const invalid = () =>
    new ApiError('parameter_invalid', `Invalid expiry ${JSON.stringify(input)}: use an ISO 8601 date or date-time, e.g. 2026-12-31T23:59:59Z.`, {
      param: 'expires',
    });
  if (!match) throw invalid();
  const [, year, month, day, hour, minute, second, zone] = match;
  const normalized = hour === undefined ? `${year}-${month}-${day}T00:00:00Z` : zone ? text.replace(' ', 'T') : `${text.replace(' ', 'T')}Z`;
  const date = new Date(normalized);
  if (Number.isNaN(date.getTime())) throw invalid();
  const calendar = new Date(Date.UTC(Number(year), Number(month) - 1, Number(day)));
  if (calendar.getUTCDate() !== Number(day) || calendar.getUTCMonth() !== Number(month) - 1) throw invalid();
  if (Number(hour ?? 0) > 23 || Number(minute ?? 0) > 59 || Number(second ?? 0) > 59) throw invalid();
  return date;
}
