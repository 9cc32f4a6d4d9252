/**
 * The per-account bound on open posts. A worker makes at most its capacity (WORKER_CONCURRENCY) of early
 * attempts at once; one account whose receiver answers slowly would otherwise fill all of them with its
 * backlog, and every other account's attempt 1 would wait behind it. So each account (and mode) holds at most
 * its share of that capacity: an attempt past it is not made early, and its workflow's own try makes it.
 */

/** The part of the capacity one account may hold: the rest stays open to every other account. */
export const ACCOUNT_SHARE = 0.5;

export interface AccountShare {
  /** Takes a place for one post of this account; undefined when the account holds its share already. */
  take(account: string): (() => void) | undefined;
}

/** At most `Math.max(1, floor(capacity * share))` places per account at once. */
export function createAccountShare(capacity: number, share = ACCOUNT_SHARE): AccountShare {
  const limit = Math.max(1, Math.floor(capacity * share));
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
        const left = (open.get(account) ?? 1) - 1;
        if (left <= 0) open.delete(account);
        else open.set(account, left);
      };
    },
  };
}
