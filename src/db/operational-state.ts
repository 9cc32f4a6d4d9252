import { withTransaction, type Pool } from './pool';

/**
 * What the metrics page reads from Postgres at scrape time (infra/metrics.ts): counts across tables, no rows.
 * Each read runs under a statement timeout, so a scrape never leaves a long query behind on the server.
 */

const STATEMENT_TIMEOUT = '2s';

export interface OperationalStateRow {
  failing: { livemode: boolean; count: number }[];
  outboxPending: number;
  outboxOldestAgeSeconds: number;
}

export async function readOperationalState(pool: Pool): Promise<OperationalStateRow> {
  return withTransaction(pool, async (tx) => {
    await tx.query(`SET LOCAL statement_timeout = '${STATEMENT_TIMEOUT}'`);
    const failing = await tx.query<{ livemode: boolean; count: number }>(
      `SELECT livemode, count(*)::int AS count
         FROM webhook_endpoints
        WHERE status = 'failing' AND deleted_at IS NULL AND disabled_at IS NULL
        GROUP BY livemode`,
    );
    // What waits for its hand-off to Temporal (the outbox, db/outbox.ts), on the dispatcher's own indexes: stored
    // events, and the deliveries merchants asked for that are due (a recovery's later ones, and an attempt 1
    // deferred to its rate-limit place, are not late yet: they count from when they fall due).
    const outbox = await tx.query<{ pending: number; oldest_age: number }>(
      `SELECT count(*)::int AS pending, COALESCE(EXTRACT(EPOCH FROM now() - min(since)), 0)::float8 AS oldest_age
         FROM (SELECT CASE WHEN first_attempt_place IS NULL THEN inserted_at ELSE dispatch_lease_until END AS since
                 FROM events
                WHERE dispatched_at IS NULL AND (first_attempt_place IS NULL OR dispatch_lease_until <= now())
               UNION ALL
               SELECT dispatch_after FROM deliveries
                WHERE dispatched_at IS NULL AND trigger <> 'automatic' AND dispatch_after <= now()) waiting`,
    );
    const row = outbox.rows[0];
    return { failing: failing.rows, outboxPending: row?.pending ?? 0, outboxOldestAgeSeconds: row?.oldest_age ?? 0 };
  });
}
