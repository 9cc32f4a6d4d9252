import type { Db } from './pool';

/** Table endpoint_abandonments: each abandoned delivery of an event to an endpoint, recorded once. */

/**
 * Records the abandonment unless it already is. Its time is that of the delivery's last recorded attempt, and it
 * counts only when no success of the endpoint was recorded after that time (a success in between ended the
 * streak it belonged to). Returns undefined when the row already existed: a retried report, which counts nothing.
 */
export async function insertAbandonmentOnce(
  db: Db,
  endpointId: string,
  eventId: string,
): Promise<{ counted: boolean } | undefined> {
  const { rows } = await db.query<{ counted: boolean }>(
    `WITH last_attempt AS (
       SELECT COALESCE(max(created_at), now()) AS at FROM delivery_attempts WHERE endpoint_id = $1 AND event_id = $2
     )
     INSERT INTO endpoint_abandonments (endpoint_id, event_id, abandoned_at, counted)
     SELECT $1, $2, last_attempt.at,
            NOT EXISTS (SELECT 1 FROM delivery_attempts
                         WHERE endpoint_id = $1 AND succeeded AND created_at > last_attempt.at)
       FROM last_attempt
     ON CONFLICT (endpoint_id, event_id) DO NOTHING
     RETURNING counted`,
    [endpointId, eventId],
  );
  return rows[0];
}

/** Retention: at most `limit` abandonment records older than `cutoff` (their events may be gone already). */
export async function deleteAbandonmentsBefore(db: Db, cutoff: Date, limit: number): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM endpoint_abandonments WHERE (endpoint_id, event_id) IN (
       SELECT endpoint_id, event_id FROM endpoint_abandonments WHERE created_at < $1 ORDER BY created_at LIMIT $2)`,
    [cutoff, limit],
  );
  return rowCount ?? 0;
}
