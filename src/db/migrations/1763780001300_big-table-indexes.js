/**
 * Indexes for reads that stay fast on big tables (millions of events and attempts), and that leave the planner one
 * good plan for an account or endpoint of any size, built without locking out writes: CREATE INDEX CONCURRENTLY
 * cannot run inside a transaction, so this migration is JavaScript with noTransaction(), one statement per step.
 * A build that failed half way leaves an invalid index behind; each step drops it first, so running the migration
 * again finishes the job. Old indexes go only once their replacements exist.
 *
 *   events_account_listing_idx   GET /v1/events and the developers page's events, newest first: the
 *                                (inserted_at, id) order and its cursor read from the index, however deep the
 *                                page. Replaces events_account_idx, which lacked the id.
 *   events_account_type_idx      the same list filtered by kind: a rare or absent kind is found without reading
 *                                every event of the account.
 *   events_created_idx           retention, oldest first by the event's `created`. Replaces events_inserted_idx:
 *                                an index in storing order offered every account's list an order of its own, and
 *                                the planner took it for the biggest accounts only.
 *   delivery_attempts_event_endpoint_idx
 *                                an event's attempts, and its attempts to one endpoint (the event page), exactly.
 *                                Replaces delivery_attempts_event_idx.
 *   delivery_attempts_endpoint_succeeded_idx, delivery_attempts_endpoint_failed_idx
 *                                an endpoint's attempts filtered by outcome: an outcome the endpoint never had is
 *                                an empty range, not a scan of all its attempts. Partial, so the unfiltered list
 *                                keeps delivery_attempts_endpoint_idx as its only index.
 *   endpoint_abandonments_event_idx
 *                                retention deletes an event's abandonment records by event.
 *
 * And the foreign key from an attempt to its event goes: an attempt's event is its delivery's, which the
 * attempt's key to its delivery (and the delivery's to its event, both ON DELETE CASCADE) already ties it to.
 * Retention paid for it on every event it deleted, a look-up among the attempts it had just deleted: a third of
 * the time of a batch. Dropping it needs a brief exclusive lock on both tables; lock_timeout keeps the wait for
 * it short, so writers never queue long behind it (the migration fails instead, and runs again).
 */

const created = [
  ['events_account_listing_idx', 'events (account_id, livemode, inserted_at DESC, id DESC)'],
  ['events_account_type_idx', 'events (account_id, livemode, type, inserted_at DESC, id DESC)'],
  ['events_created_idx', 'events (created, id)'],
  ['delivery_attempts_event_endpoint_idx', 'delivery_attempts (event_id, endpoint_id)'],
  [
    'delivery_attempts_endpoint_succeeded_idx',
    'delivery_attempts (endpoint_id, created_at DESC, id DESC) WHERE succeeded',
  ],
  [
    'delivery_attempts_endpoint_failed_idx',
    'delivery_attempts (endpoint_id, created_at DESC, id DESC) WHERE NOT succeeded',
  ],
  ['endpoint_abandonments_event_idx', 'endpoint_abandonments (event_id)'],
];

const replaced = [
  ['events_account_idx', 'events (account_id, livemode, inserted_at DESC)'],
  ['events_inserted_idx', 'events (inserted_at, id)'],
  ['delivery_attempts_event_idx', 'delivery_attempts (event_id)'],
];

exports.up = (pgm) => {
  pgm.noTransaction();
  for (const [name, on] of created) {
    pgm.sql(`DROP INDEX CONCURRENTLY IF EXISTS ${name}`);
    pgm.sql(`CREATE INDEX CONCURRENTLY ${name} ON ${on}`);
  }
  for (const [name] of replaced) pgm.sql(`DROP INDEX CONCURRENTLY IF EXISTS ${name}`);
  pgm.sql("SET lock_timeout = '5s'");
  pgm.sql('ALTER TABLE delivery_attempts DROP CONSTRAINT IF EXISTS delivery_attempts_event_id_fkey');
  pgm.sql('RESET lock_timeout');
};

exports.down = (pgm) => {
  pgm.noTransaction();
  pgm.sql(
    'ALTER TABLE delivery_attempts ADD CONSTRAINT delivery_attempts_event_id_fkey FOREIGN KEY (event_id) REFERENCES events (id) NOT VALID',
  );
  pgm.sql('ALTER TABLE delivery_attempts VALIDATE CONSTRAINT delivery_attempts_event_id_fkey');
  for (const [name, on] of replaced) {
    pgm.sql(`DROP INDEX CONCURRENTLY IF EXISTS ${name}`);
    pgm.sql(`CREATE INDEX CONCURRENTLY ${name} ON ${on}`);
  }
  for (const [name] of [...created].reverse()) pgm.sql(`DROP INDEX CONCURRENTLY IF EXISTS ${name}`);
};
