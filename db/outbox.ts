import { preparedStatement, type Pool } from './pool';

/**
 * The events table as an outbox (migration 1763780000300): events stored with `dispatched_at` null wait for a
 * dispatcher to start their delivery workflow. A claim is a lease, so a dispatcher that dies or is refused by
 * Temporal leaves the event to be claimed again once the lease lapses.
 */

/** What starting an event's delivery needs: the publish-time snapshot and its automatic deliveries. */
export interface UndispatchedEvent {
  id: string;
  account_id: string;
  livemode: boolean;
  type: string;
  endpoint_ids: string[];
  /** Endpoint id -> its automatic delivery (dly_...). */
  delivery_ids: Record<string, string>;
}

const CLAIM_UNDISPATCHED = preparedStatement(
  'events_claim_undispatched',
  `WITH relaxed AS (
       SELECT set_config('synchronous_commit', 'off', true)
     ), claimable AS (
       SELECT id FROM events
        WHERE dispatched_at IS NULL
          AND (dispatch_lease_until IS NULL OR dispatch_lease_until < now())
          AND ($1::text[] IS NULL OR id = ANY ($1::text[]))
        ORDER BY inserted_at, id
        LIMIT $2
          FOR UPDATE SKIP LOCKED
     )
     UPDATE events ev SET dispatch_lease_until = now() + make_interval(secs => $3::float8 / 1000)
       FROM claimable c, relaxed
      WHERE ev.id = c.id
     RETURNING ev.id, ev.account_id, ev.livemode, ev.type, ev.endpoint_ids,
               (SELECT COALESCE(jsonb_object_agg(d.endpoint_id, d.id), '{}') FROM deliveries d
                 WHERE d.event_id = ev.id AND d.trigger = 'automatic') AS delivery_ids`,
);

/**
 * Leases up to `limit` waiting events, oldest first (only `ids` when given), skipping rows another dispatcher is
 * claiming right now and events still under a lease. One statement: the lease is the only state a claim writes.
 * Neither the lease nor the hand-off mark waits for the WAL flush (set_config(..., true): this statement's
 * transaction only): Postgres crashing right after would lose at most the mark, and the event would be claimed
 * and started again, which finds its workflow started and changes nothing. The event itself was stored durably.
 */
export async function claimUndispatched(
  pool: Pool,
  input: { ids?: string[]; limit: number; leaseMs: number },
): Promise<UndispatchedEvent[]> {
  const { rows } = await pool.query<UndispatchedEvent>({
    ...CLAIM_UNDISPATCHED,
    values: [input.ids ?? null, input.limit, input.leaseMs],
  });
  return rows;
}

const MARK_DISPATCHED = preparedStatement(
  'events_mark_dispatched',
  `WITH relaxed AS (SELECT set_config('synchronous_commit', 'off', true))
     UPDATE events SET dispatched_at = now(), dispatch_lease_until = NULL
       FROM relaxed
      WHERE id = ANY ($1::text[]) AND dispatched_at IS NULL`,
);

/** Their workflows are started (or were already): the hand-off is done. */
export async function markDispatched(pool: Pool, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await pool.query({ ...MARK_DISPATCHED, values: [ids] });
}

/**
 * Starting these failed here: their leases end now, so another dispatcher (or this one's next sweep, on its
 * backoff) may try at once rather than after the lease.
 */
export async function releaseLeases(pool: Pool, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await pool.query(
    `WITH relaxed AS (SELECT set_config('synchronous_commit', 'off', true))
     UPDATE events SET dispatch_lease_until = NULL
       FROM relaxed
      WHERE id = ANY ($1::text[]) AND dispatched_at IS NULL`,
    [ids],
  );
}

/** The channel the insert trigger notifies with the event id. */
export const OUTBOX_CHANNEL = 'event_outbox';
