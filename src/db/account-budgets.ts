import type { Db } from './pool';

/**
 * Per account and mode caps (API keys, webhook endpoints) are checked by counting and inserting. Two requests
 * counting at once would both see room, so a capped insert first takes this transaction-scoped advisory lock,
 * one per (what, account, mode): inserts of one account and mode queue for the moment of their count, nothing
 * else waits (reads, deliveries and other accounts never take it). A hash collision only makes two unrelated
 * budgets share a queue for that moment.
 */
export async function lockAccountBudget(tx: Db, what: string, accountId: string, livemode: boolean): Promise<void> {
  await tx.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [
    `${what}:${accountId}:${livemode ? 'live' : 'test'}`,
  ]);
}
