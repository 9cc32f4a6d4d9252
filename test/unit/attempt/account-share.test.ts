import { describe, expect, it, vi } from 'vitest';
import { createAccountShare } from '../../../src/attempt/account-share';
import { createEarlyAttempts } from '../../../src/attempt/early';
import type { DeliverEventInput } from '../../../src/core/delivery-contract';

/** Every early post (vi.mock is hoisted above the imports) stays open until the test lets it end, so the open posts can be counted. */
const open: Array<() => void> = [];
vi.mock('../../../src/attempt/run', () => ({
  runAttempt: () => new Promise((resolve) => open.push(() => resolve({ kind: 'held', pausedForMs: 0 }))),
}));

/** Attempt 1's id the outbox hands the early tries with the input. */
const attemptIds = (input: DeliverEventInput) => ({ [input.endpointIds[0]!]: `dlv_${input.eventId}` });

function handOffInput(accountId: string, n: number): DeliverEventInput {
  return {
    eventId: `evt_${accountId}_${n}`,
    eventType: 'parcel.delivered',
    accountId,
    livemode: false,
    endpointIds: [`we_${accountId}`],
    deliveryIds: { [`we_${accountId}`]: `dly_${accountId}_${n}` },
    retryDelaysMs: [1_000],
    timeoutMs: 30_000,
  } as unknown as DeliverEventInput;
}

describe('per-account share of the early attempts', () => {
  it('gives one account at most its share of places and takes them back once', () => {
    const share = createAccountShare(4);
    const first = share.take('a');
    const second = share.take('a');
    expect(share.take('a')).toBeUndefined();
    expect(share.take('b')).toBeDefined();
    first?.();
    first?.();
    // Released twice, one place came back: one more take, not two.
    expect(share.take('a')).toBeDefined();
    expect(share.take('a')).toBeUndefined();
    second?.();
  });

  it('tells the outbox how many more events of each account holding places it may claim, and when one at its share frees one', () => {
    let freed = 0;
    const share = createAccountShare(4, () => (freed += 1));
    const a1 = share.take('a');
    expect(share.room()).toEqual({ accounts: ['a'], room: [1] });
    const a2 = share.take('a');
    const b1 = share.take('b');
    expect(share.room()).toEqual({ accounts: ['a', 'b'], room: [0, 1] });
    // b was not at its share: nothing kept back is freed.
    b1?.();
    expect(freed).toBe(0);
    a2?.();
    expect(freed).toBe(1);
    a1?.();
    expect(freed).toBe(1);
    expect(share.room()).toEqual({ accounts: [], room: [] });
  });

  it("leaves room for a quiet account while a slow receiver holds one account's posts open", async () => {
    const early = createEarlyAttempts({} as never, { maxInFlight: 4 });
    // A slow receiver: account A's posts stay open. Past its share (half of 4) its attempts 1 are left to the
    // workflow: the hand-off gives back the input at once, holding no place.
    const noisy = Array.from({ length: 6 }, (_, n) =>
      early.handOff(handOffInput('acct_a', n), attemptIds(handOffInput('acct_a', n))),
    );
    expect(early.inFlight()).toBe(2);
    expect(noisy.filter((started) => !(started instanceof Promise))).toHaveLength(4);
    // Account B still gets an early attempt.
    const quiet = early.handOff(handOffInput('acct_b', 0), attemptIds(handOffInput('acct_b', 0)));
    expect(quiet).toBeInstanceOf(Promise);
    expect(early.inFlight()).toBe(3);
    // Once A's posts end, its places are free again.
    for (const end of open.splice(0)) end();
    await Promise.all([...noisy, quiet]);
    expect(early.handOff(handOffInput('acct_a', 9), attemptIds(handOffInput('acct_a', 9)))).toBeInstanceOf(Promise);
    for (const end of open.splice(0)) end();
    await early.drain();
    expect(early.inFlight()).toBe(0);
  });
});
