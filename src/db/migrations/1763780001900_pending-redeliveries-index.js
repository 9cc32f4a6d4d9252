/**
 * An account's redeliveries still pending (resend, recover, test), counted before each new one: a partial index
 * holds only those rows, so the count reads the account's pending redeliveries and nothing else. Built without
 * locking out writes: CREATE INDEX CONCURRENTLY cannot run inside a transaction, hence JavaScript with
 * noTransaction(). A build that failed half way leaves an invalid index; dropping it first lets a rerun finish.
 */

const NAME = 'deliveries_pending_redeliveries_idx';

exports.up = (pgm) => {
  pgm.noTransaction();
  pgm.sql(`DROP INDEX CONCURRENTLY IF EXISTS ${NAME}`);
  pgm.sql(
    `CREATE INDEX CONCURRENTLY ${NAME} ON deliveries (account_id) WHERE status = 'pending' AND trigger <> 'automatic'`,
  );
};

exports.down = (pgm) => {
  pgm.noTransaction();
  pgm.sql(`DROP INDEX CONCURRENTLY IF EXISTS ${NAME}`);
};
