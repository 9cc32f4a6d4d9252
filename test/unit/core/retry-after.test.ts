import { describe, expect, it } from 'vitest';
import { RETRY_AFTER_MAX_MS } from '../../../src/core/delivery-policy';
import { honoursRetryAfter, parseRetryAfter } from '../../../src/core/retry-after';

const NOW = Date.parse('2026-11-25T12:00:00.000Z');

describe('parseRetryAfter', () => {
  it('reads delta-seconds as a delay from the answer', () => {
    expect(parseRetryAfter('120', NOW)).toBe(120_000);
    expect(parseRetryAfter(' 5 ', NOW)).toBe(5_000);
    expect(parseRetryAfter(['7', '9'], NOW)).toBe(7_000);
  });

  it('reads an HTTP date as the time left until it', () => {
    expect(parseRetryAfter('Wed, 25 Nov 2026 12:00:30 GMT', NOW)).toBe(30_000);
    expect(parseRetryAfter('Wednesday, 25-Nov-26 12:01:00 GMT', NOW)).toBe(60_000);
  });

  it('ignores garbage, negative numbers, fractions and nothing at all', () => {
    for (const value of ['soon', '', '   ', '-5', '1.5', '12abc', '0x10', 'Wed, 99 Foo 2026']) {
      expect(parseRetryAfter(value, NOW), value).toBeUndefined();
    }
    expect(parseRetryAfter(undefined, NOW)).toBeUndefined();
    expect(parseRetryAfter([], NOW)).toBeUndefined();
  });

  it('ignores zero and a date already past: the ladder alone decides', () => {
    expect(parseRetryAfter('0', NOW)).toBeUndefined();
    expect(parseRetryAfter('Wed, 25 Nov 2026 11:59:00 GMT', NOW)).toBeUndefined();
    expect(parseRetryAfter('Wed, 25 Nov 2026 12:00:00 GMT', NOW)).toBeUndefined();
  });

  it('caps what is asked at 6 hours', () => {
    expect(RETRY_AFTER_MAX_MS).toBe(6 * 3_600_000);
    expect(parseRetryAfter(String(6 * 3600), NOW)).toBe(RETRY_AFTER_MAX_MS);
    expect(parseRetryAfter(String(6 * 3600 + 1), NOW)).toBe(RETRY_AFTER_MAX_MS);
    expect(parseRetryAfter('99999999999999999999', NOW)).toBe(RETRY_AFTER_MAX_MS);
    expect(parseRetryAfter('Thu, 26 Nov 2026 12:00:00 GMT', NOW)).toBe(RETRY_AFTER_MAX_MS);
  });
});

describe('honoursRetryAfter', () => {
  it('holds for 429 and 503 only', () => {
    expect(honoursRetryAfter(429)).toBe(true);
    expect(honoursRetryAfter(503)).toBe(true);
    for (const status of [200, 301, 400, 500, 502, 504, null]) expect(honoursRetryAfter(status)).toBe(false);
  });
});
