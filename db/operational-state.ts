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

/**
 * TODO(outbox): main does not yet record the hand-off of an event to Temporal (the outbox of issue 11 adds it).
 * Until then an event waits when one of its automatic deliveries is still pending with no attempt, OUTBOX_GRACE
 * after it was made (its first attempt is on record well within that; a delivery skipped because its endpoint
 * was removed or disabled is no longer pending). Resend, recover and test deliveries are left out: recover starts
 * them at a bounded pace on purpose. When the hand-off column lands this becomes `WHERE <column> IS NULL` on the
 * dispatcher's own index; until then it scans deliveries, under the statement timeout.
 */
const OUTBOX_GRACE = '30 seconds';

export async function readOperationalState(pool: Pool): Promise<OperationalStateRow> {
  return withTransaction(pool, async (tx) => {
    await tx.query(`SET LOCAL statement_timeout = '${STATEMENT_TIMEOUT}'`);
    const failing = await tx.query<{ livemode: boolean; count: number }>(
      `SELECT livemode, count(*)::int AS count
         FROM webhook_endpoints
        WHERE status = 'failing' AND deleted_at IS NULL AND disabled_at IS NULL
        GROUP BY livemode`,
    );
    const outbox = await tx.query<{ pending: number; oldest_age: number }>(
      `SELECT count(*)::int AS pending,
              COALESCE(EXTRACT(EPOCH FROM now() - min(created_at)), 0)::float8 AS oldest_age
         FROM deliveries
        WHERE trigger = 'automatic' AND status = 'pending' AND attempts = 0 AND created_at < now() - $1::interval`,
      [OUTBOX_GRACE],
    );
    const row = outbox.rows[0];
    return { failing: failing.rows, outboxPending: row?.pending ?? 0, outboxOldestAgeSeconds: row?.oldest_age ?? 0 };
  });
}
