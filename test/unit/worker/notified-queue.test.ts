import { describe, expect, it } from 'vitest';
import { NotifiedQueue } from '../../../src/worker/notified-queue';

describe('NotifiedQueue', () => {
  it("serves accounts in turns: another account's event comes within the flood's first batch", () => {
    const queue = new NotifiedQueue();
    for (let i = 0; i < 500; i++) queue.addPayload(`evt_a${i} acct_a`);
    queue.addPayload('evt_b0 acct_b');
    queue.addPayload('dly_c0 acct_c');
    queue.addPayload('evt_b1 acct_b');
    const first = queue.take(4);
    expect(first.accounts).toEqual(['acct_a', 'acct_b', 'acct_c']);
    expect(first.ids).toEqual(['evt_a0', 'evt_b0', 'dly_c0', 'evt_a1']);
    // B had been served, then A: the next batch starts with B.
    expect(queue.take(3).ids).toEqual(['evt_b1', 'evt_a2', 'evt_a3']);
    expect(queue.size).toBe(496);
  });

  it("keeps each account's order, counts an id once, and takes an older trigger's bare id", () => {
    const queue = new NotifiedQueue();
    queue.addPayload('evt_1 acct_a');
    queue.addPayload('evt_1 acct_a');
    queue.addPayload('evt_old');
    queue.addPayload('evt_2 acct_a');
    expect(queue.size).toBe(3);
    expect(queue.take(10)).toEqual({ ids: ['evt_1', 'evt_old', 'evt_2'], accounts: ['acct_a', ''] });
    expect(queue.size).toBe(0);
    expect(queue.take(10)).toEqual({ ids: [], accounts: [] });
    // Taken ids may be notified again (a lapsed lease): they queue anew.
    queue.addPayload('evt_1 acct_a');
    expect(queue.take(1).ids).toEqual(['evt_1']);
  });

  it('takes only the accounts admitted, leaving the others queued in their order', () => {
    const queue = new NotifiedQueue();
    for (let i = 0; i < 3; i++) queue.addPayload(`evt_a${i} acct_a`);
    queue.addPayload('evt_b0 acct_b');
    expect(queue.take(10, (account) => account !== 'acct_a')).toEqual({ ids: ['evt_b0'], accounts: ['acct_b'] });
    expect(queue.take(10, (account) => account !== 'acct_a')).toEqual({ ids: [], accounts: [] });
    expect(queue.take(2).ids).toEqual(['evt_a0', 'evt_a1']);
  });

  it('holds one account never drained in order across compactions', () => {
    const queue = new NotifiedQueue();
    const taken: string[] = [];
    for (let i = 0; i < 5_000; i++) {
      queue.add(`evt_${i}`, 'acct_a');
      if (i % 2 === 1) taken.push(...queue.take(1).ids);
    }
    taken.push(...queue.take(10_000).ids);
    expect(taken).toEqual(Array.from({ length: 5_000 }, (_, i) => `evt_${i}`));
  });
});
