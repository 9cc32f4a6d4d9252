import { describe, expect, it } from 'vitest';
import { heldWait, throttleWait } from '../../../src/core/delivery-contract';
import {
  HELD_RECHECK_MAX_MS,
  HELD_RECHECK_MIN_MS,
  heldRecheckFactor,
  heldRecheckMs,
} from '../../../src/core/delivery-policy';

describe('held re-checks of a paused endpoint', () => {
  it('wait a quarter of the pause so far, between 1 s and 5 minutes, plus up to a fifth at random', () => {
    expect(heldRecheckMs(0, 0)).toBe(HELD_RECHECK_MIN_MS);
    expect(heldRecheckMs(40_000, 0)).toBe(10_000);
    expect(heldRecheckMs(40_000, 0.999)).toBeLessThanOrEqual(12_000);
    expect(heldRecheckMs(86_400_000, 0)).toBe(HELD_RECHECK_MAX_MS);
    expect(heldRecheckMs(86_400_000, 0.999)).toBeLessThanOrEqual(HELD_RECHECK_MAX_MS * 1.2);
  });

  it('grow with the ladders sharing one history, so a held fan-out keeps its history bounded', () => {
    expect(heldRecheckFactor(1)).toBe(1);
    expect(heldRecheckFactor(20)).toBe(20);
    // Twenty ladders held for a 3-day max age: about ten history events per re-check each, far below 51,200.
    const rechecks = (3 * 86_400_000) / (HELD_RECHECK_MAX_MS * heldRecheckFactor(20));
    expect(rechecks * 20 * 10).toBeLessThan(20_000);
  });

  it('say in the Temporal UI that the attempt is held, since when and until when', () => {
    const since = Date.UTC(2026, 0, 1, 12, 0, 0);
    const until = Date.UTC(2026, 0, 1, 12, 5, 0);
    expect(heldWait(since, until)).toBe(
      'waits while its endpoint is paused (since 12:00:00), checks again at 12:05:00',
    );
    expect(throttleWait({ untilMs: until, rateLimit: null, pausedSinceMs: since })).toBe(heldWait(since, until));
    expect(throttleWait({ untilMs: until, rateLimit: 5 })).toBe('waits for its rate limit (5/s) until 12:05:00');
  });
});
