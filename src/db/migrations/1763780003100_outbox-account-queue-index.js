/**
 * The outbox's waiting events as one queue per account (and mode), oldest first: the dispatcher's sweep claim
 * finds the accounts with events waiting by skipping through it and reads each account's first few in order,
 * so a claim costs as many index reads as accounts waiting times the claim's size, however long one account's
 * backlog is, and never sorts the whole backlog. Built without locking out writes: CREATE INDEX CONCURRENTLY
 * cannot run inside a transaction, hence JavaScript with noTransaction(). A build that failed half way leaves an
 * invalid index; dropping it first lets a rerun finish.
 */

const NAME = 'events_undispatched_account_idx';

exports.up = (pgm) => {
  pgm.noTransaction();
  pgm.sql(`DROP INDEX CONCURRENTLY IF EXISTS ${NAME}`);
  pgm.sql(
    `CREATE INDEX CONCURRENTLY ${NAME} ON events (account_id, livemode, inserted_at, id) WHERE dispatched_at IS NULL`,
  );
};

exports.down = (pgm) => {
  pgm.noTransaction();
  pgm.sql(`DROP INDEX CONCURRENTLY IF EXISTS ${NAME}`);
};
