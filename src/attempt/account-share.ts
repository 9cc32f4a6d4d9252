import type { AccountRoom } from '../db/outbox';

/**
 * The per-account bound on open posts. A worker makes at most its capacity (WORKER_CONCURRENCY) of early
 * attempts at once; one account whose receiver answers slowly would otherwise fill all of them with its
 * backlog, and every other account's attempt 1 would wait behind it. So each account (and mode) holds at most
 * its share of that capacity, and the outbox claims of an account no more events than it has room for
 * (`room`): the rest of its backlog waits in the outbox, where it holds no slot and queues in front of no other
 * account's workflow task. An attempt past the share all the same (claimed before the share filled) is not
 * made early: its workflow's own try makes it.
 */

/** The part of the capacity one account may hold: the rest stays open to every other account. */
export const ACCOUNT_SHARE = 0.5;

export interface AccountShare {
  /** Takes a place for one post of this account; undefined when the account holds its share already. */
  take(account: string): (() => void) | undefined;
  /** Every account holding a place now, with the places it may still take (0 for one at its share). */
  room(): AccountRoom;
}

/**
 * At most `Math.max(1, floor(capacity * share))` places per account at once. `onFreed` hears when an account at
 * its share gives a place back: its waiting events may be claimed again.
 */
export function createAccountShare(capacity: number, onFreed: () => void = () => undefined): AccountShare {
  const limit = Math.max(1, Math.floor(capacity * ACCOUNT_SHARE));
  const open = new Map<string, number>();
  return {
    take(account) {
      const held = open.get(account) ?? 0;
      if (held >= limit) return undefined;
      open.set(account, held + 1);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        const before = open.get(account) ?? 1;
        if (before <= 1) open.delete(account);
        else open.set(account, before - 1);
        if (before >= limit) onFreed();
      };
    },
    room() {
      const accounts = [...open.keys()];
      return { accounts, room: accounts.map((account) => limit - (open.get(account) ?? 0)) };
    },
  };
}
