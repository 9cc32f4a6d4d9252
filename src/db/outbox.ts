import type { DeliveryTrigger } from '../core/delivery-contract';
import { preparedStatement, type Pool } from './pool';

/**
 * The outbox of the hand-off to Temporal, in two tables. Events stored with `dispatched_at` null wait for a
 * dispatcher to start the workflow of their automatic deliveries (migration 1763780000300); deliveries a merchant
 * asked for (resend, recover, test) wait likewise, each for its own workflow, from their `dispatch_after` on
 * (migration 1763780000600). A claim is a lease, so a dispatcher that dies or is refused by Temporal leaves the
 * row to be claimed again once the lease lapses.
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
  /** The event's parcel and its number in it; null for an event without a parcel. */
  parcel_id: string | null;
  sequence: number | null;
  /** Endpoints of the snapshot that keep order per parcel (migration 1763780001000). */
  ordered_endpoint_ids: string[];
  /** The publish's W3C traceparent, which the hand-off continues; null for events stored without one. */
  trace_parent: string | null;
  /** When the event was stored, Unix ms: its deliveries' age (DELIVERY_MAX_AGE) counts from it. */
  stored_at_ms: number;
  /** The rate-limit place attempt 1 took when it was deferred (domain/outbox.ts deferral), and the endpoint's limit. */
  first_attempt_place: number | null;
  rate_limit: number | null;
}

/**
 * Accounts (`<account id>:<livemode>`) side by side with how many of their events a claim may take at most: the
 * accounts whose early posts hold a share of a worker (attempt/account-share.ts). Any other account: no bound.
 */
export interface AccountRoom {
  accounts: string[];
  room: number[];
}

const CLAIM_UNDISPATCHED = preparedStatement(
  'events_claim_undispatched',
  `WITH RECURSIVE relaxed AS (
       SELECT set_config('synchronous_commit', 'off', true)
     ), waiting_accounts AS (
       -- the sweep: the accounts (and modes) with events waiting, one index seek each (events_undispatched_account_idx)
       (SELECT account_id, livemode FROM events
         WHERE dispatched_at IS NULL AND $1::text[] IS NULL
         ORDER BY account_id, livemode LIMIT 1)
       UNION ALL
       SELECT n.account_id, n.livemode FROM waiting_accounts p,
              LATERAL (SELECT account_id, livemode FROM events
                        WHERE dispatched_at IS NULL AND (account_id, livemode) > (p.account_id, p.livemode)
                        ORDER BY account_id, livemode LIMIT 1) n
     ), ranked AS (
       -- each account's first events, oldest first, as many as a claim could take of it: the claim's size, or
       -- the room of an account holding early posts
       SELECT f.id, f.inserted_at, f.turn FROM waiting_accounts a
         LEFT JOIN unnest($4::text[], $5::int[]) AS q(account, room) ON q.account = a.account_id || ':' || a.livemode
         CROSS JOIN LATERAL (
           SELECT e.id, e.inserted_at, row_number() OVER (ORDER BY e.inserted_at, e.id) AS turn FROM (
             SELECT id, inserted_at FROM events
              WHERE account_id = a.account_id AND livemode = a.livemode AND dispatched_at IS NULL
                AND (dispatch_lease_until IS NULL OR dispatch_lease_until < now())
              ORDER BY inserted_at, id
              LIMIT least($2::int, COALESCE(q.room, $2::int))) e) f
       UNION ALL
       -- the events notified: only those, ranked the same way
       SELECT id, inserted_at, turn FROM (
         SELECT id, inserted_at, account_id, livemode,
                row_number() OVER (PARTITION BY account_id, livemode ORDER BY inserted_at, id) AS turn
           FROM events
          WHERE id = ANY ($1::text[]) AND dispatched_at IS NULL
            AND (dispatch_lease_until IS NULL OR dispatch_lease_until < now())) n
         LEFT JOIN unnest($4::text[], $5::int[]) AS q(account, room) ON q.account = n.account_id || ':' || n.livemode
        WHERE q.room IS NULL OR n.turn <= q.room
     ), claimable AS (
       -- ranked in claim order first, so the locking read stops at the claim's size rather than reading every rank
       SELECT w.id FROM (SELECT id, inserted_at, turn FROM ranked ORDER BY turn, inserted_at, id) r
         JOIN events w ON w.id = r.id
        -- the lease is checked again on the locked row itself: a racing claim that committed after this
        -- statement's snapshot leaves the row unlocked but leased, and must not be claimed twice
        WHERE w.dispatched_at IS NULL
          AND (w.dispatch_lease_until IS NULL OR w.dispatch_lease_until < now())
        ORDER BY r.turn, r.inserted_at, r.id
        LIMIT $2
          FOR UPDATE OF w SKIP LOCKED
     )
     UPDATE events ev SET dispatch_lease_until = now() + make_interval(secs => $3::float8 / 1000)
       FROM claimable c, relaxed
      WHERE ev.id = c.id
     RETURNING ev.id, ev.account_id, ev.livemode, ev.type, ev.endpoint_ids, ev.parcel_id, ev.sequence, ev.ordered_endpoint_ids, ev.trace_parent,
               (extract(epoch FROM ev.inserted_at) * 1000)::float8 AS stored_at_ms,
               ev.first_attempt_place::float8 AS first_attempt_place,
               (SELECT rate_limit FROM webhook_endpoints WHERE id = ev.endpoint_ids[1] AND ev.first_attempt_place IS NOT NULL) AS rate_limit,
               (SELECT COALESCE(jsonb_object_agg(d.endpoint_id, d.id), '{}') FROM deliveries d
                 WHERE d.event_id = ev.id AND d.trigger = 'automatic') AS delivery_ids`,
);

/**
 * Leases up to `limit` waiting events (only `ids` when given), in turns across accounts: each account (and mode)
 * ranks its own waiting events oldest first, and the claim takes every account's first, then every account's
 * second, and so on, oldest first within a turn. So one account's backlog of thousands takes one place per turn,
 * and an event of a quiet account is in the next claim rather than behind the whole backlog; within an account
 * the order stays oldest first, so a parcel's events are handed off in their order. Skipping rows another dispatcher is
 * claiming right now and events still under a lease. One statement: the lease is the only state a claim writes.
 * Neither the lease nor the hand-off mark waits for the WAL flush (set_config(..., true): this statement's
 * transaction only): Postgres crashing right after would lose at most the mark, and the event would be claimed
 * and started again, which finds its workflow started and changes nothing. The event itself was stored durably.
 */
export async function claimUndispatched(
  pool: Pool,
  input: { ids?: string[]; limit: number; leaseMs: number; room?: AccountRoom },
): Promise<UndispatchedEvent[]> {
  const { rows } = await pool.query<UndispatchedEvent>({
    ...CLAIM_UNDISPATCHED,
    values: [input.ids ?? null, input.limit, input.leaseMs, input.room?.accounts ?? [], input.room?.room ?? []],
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

/** A waiting row sent back to the outbox until its attempt 1's rate-limit place comes. */
export interface OutboxDeferral {
  id: string;
  /** When it is due again, Unix ms. */
  untilMs: number;
  /** The place attempt 1 keeps (Unix seconds); null when it holds none. */
  place: number | null;
}

/**
 * Attempt 1 of these events found no rate token at hand-off and took a place: each waits in the outbox until
 * `untilMs` (Unix ms), its lease running until then so no dispatcher claims it sooner, and keeps the place for
 * attempt 1. A dispatcher that dies meanwhile loses nothing: the row is claimed when the lease ends.
 */
export async function deferEvents(pool: Pool, rows: OutboxDeferral[]): Promise<void> {
  if (rows.length === 0) return;
  await pool.query(
    `WITH relaxed AS (SELECT set_config('synchronous_commit', 'off', true))
     UPDATE events ev SET dispatch_lease_until = to_timestamp(w.until_ms / 1000), first_attempt_place = w.place
       FROM relaxed, unnest($1::text[], $2::float8[], $3::bigint[]) AS w (id, until_ms, place)
      WHERE ev.id = w.id AND ev.dispatched_at IS NULL`,
    [rows.map((r) => r.id), rows.map((r) => r.untilMs), rows.map((r) => r.place)],
  );
}

/** The channel the insert triggers notify, with the id of the event or delivery (evt_... or dly_...) waiting. */
export const OUTBOX_CHANNEL = 'event_outbox';

/** What starting one merchant-asked delivery needs: the delivery and its event's identity. */
export interface UndispatchedDelivery {
  id: string;
  event_id: string;
  event_type: string;
  endpoint_id: string;
  account_id: string;
  livemode: boolean;
  trigger: DeliveryTrigger;
  /** Its event's publish traceparent, which the hand-off continues. */
  trace_parent: string | null;
  /** When the delivery was asked for, Unix ms: its age (DELIVERY_MAX_AGE) counts from it. */
  stored_at_ms: number;
  first_attempt_place: number | null;
  rate_limit: number | null;
}

/** A delivery waits in the outbox: one of its own workflow, not yet started. */
const WAITING = `dispatched_at IS NULL AND trigger <> 'automatic'`;

/**
 * How far a recovery may run behind its pace. A recovery's delivery that starts later than this after it was due
 * moves the endpoint's waiting ones back by as much (markDeliveriesDispatched), so the next starts one step
 * after it; below it (a timer's or a start's ordinary delay) nothing moves. And of an endpoint's waiting
 * recovery deliveries, only those due within this of the earliest may be claimed: deliveries that all fell due
 * while nothing could start them (Temporal down, no worker running) go out as at most this much of the pace at
 * once, never as a burst of the whole backlog.
 */
const RECOVERY_SLACK = `interval '1 second'`;

const WITHIN_RECOVERY_PACE = `(d.trigger <> 'recover' OR d.dispatch_after <= ${RECOVERY_SLACK} + (
            SELECT min(e.dispatch_after) FROM deliveries e
             WHERE e.dispatched_at IS NULL AND e.trigger = 'recover' AND e.endpoint_id = d.endpoint_id))`;

/**
 * Leases up to `limit` waiting deliveries that are due (only `ids` when given), earliest due first, as
 * claimUndispatched does events: skipping rows another dispatcher is claiming and deliveries under a lease.
 */
export async function claimUndispatchedDeliveries(
  pool: Pool,
  input: { ids?: string[]; limit: number; leaseMs: number },
): Promise<UndispatchedDelivery[]> {
  const { rows } = await pool.query<UndispatchedDelivery>(
    `WITH relaxed AS (
         SELECT set_config('synchronous_commit', 'off', true)
       ), claimable AS (
         SELECT id FROM deliveries d
          WHERE ${WAITING} AND dispatch_after <= now()
            AND (dispatch_lease_until IS NULL OR dispatch_lease_until < now())
            AND ($1::text[] IS NULL OR id = ANY ($1::text[]))
            AND ${WITHIN_RECOVERY_PACE}
          ORDER BY dispatch_after, id
          LIMIT $2
            FOR UPDATE SKIP LOCKED
       )
       UPDATE deliveries d SET dispatch_lease_until = now() + make_interval(secs => $3::float8 / 1000)
         FROM claimable c, relaxed, events ev
        WHERE d.id = c.id AND ev.id = d.event_id
       RETURNING d.id, d.event_id, ev.type AS event_type, d.endpoint_id, d.account_id, d.livemode, d.trigger,
                 (extract(epoch FROM d.created_at) * 1000)::float8 AS stored_at_ms,
                 d.first_attempt_place::float8 AS first_attempt_place,
                 (SELECT rate_limit FROM webhook_endpoints WHERE id = d.endpoint_id AND d.first_attempt_place IS NOT NULL) AS rate_limit,
                 ev.trace_parent`,
    [input.ids ?? null, input.limit, input.leaseMs],
  );
  return rows;
}

/**
 * Their workflows are started (or were already): the hand-off is done. Recovery deliveries that started late
 * (RECOVERY_SLACK) move the waiting ones of their endpoint back by the least of their delays, keeping the
 * spacing: the next is then due one step after the last one started.
 */
export async function markDeliveriesDispatched(pool: Pool, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await pool.query(
    `WITH relaxed AS (
         SELECT set_config('synchronous_commit', 'off', true)
       ), marked AS (
         UPDATE deliveries SET dispatched_at = now(), dispatch_lease_until = NULL
           FROM relaxed
          WHERE id = ANY ($1::text[]) AND dispatched_at IS NULL
         RETURNING endpoint_id, trigger, dispatch_after
       ), late AS (
         SELECT endpoint_id, min(now() - dispatch_after) AS delay FROM marked
          WHERE trigger = 'recover' AND dispatch_after < now() - ${RECOVERY_SLACK}
          GROUP BY endpoint_id
       )
     UPDATE deliveries d SET dispatch_after = d.dispatch_after + late.delay
       FROM late
      WHERE d.endpoint_id = late.endpoint_id AND d.trigger = 'recover' AND d.dispatched_at IS NULL
        AND NOT (d.id = ANY ($1::text[]))`,
    [ids],
  );
}

/** deferEvents for merchant-asked deliveries: due again at `untilMs` (their dispatch_after), the place kept. */
export async function deferDeliveries(pool: Pool, rows: OutboxDeferral[]): Promise<void> {
  if (rows.length === 0) return;
  await pool.query(
    `WITH relaxed AS (SELECT set_config('synchronous_commit', 'off', true))
     UPDATE deliveries d SET dispatch_after = to_timestamp(w.until_ms / 1000), dispatch_lease_until = NULL, first_attempt_place = w.place
       FROM relaxed, unnest($1::text[], $2::float8[], $3::bigint[]) AS w (id, until_ms, place)
      WHERE d.id = w.id AND d.dispatched_at IS NULL`,
    [rows.map((r) => r.id), rows.map((r) => r.untilMs), rows.map((r) => r.place)],
  );
}

/** Starting these failed here: their leases end now, as releaseLeases does for events. */
export async function releaseDeliveryLeases(pool: Pool, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await pool.query(
    `WITH relaxed AS (SELECT set_config('synchronous_commit', 'off', true))
     UPDATE deliveries SET dispatch_lease_until = NULL
       FROM relaxed
      WHERE id = ANY ($1::text[]) AND dispatched_at IS NULL`,
    [ids],
  );
}

/**
 * Milliseconds until the earliest waiting row may be claimed (a recovery's next deliveries, an attempt 1 deferred
 * to its rate-limit place), by the database's clock, which set both; null when none waits. A row that fell due
 * while a sweep was busy starting others is already due: its time is now or past (zero or less), so the
 * dispatcher sweeps again at once rather than at its periodic sweep. A row under a live lease (a start under way)
 * counts from the lease's end, and a recovery's delivery held back by its pace is left to the one before it.
 */
export async function nextDeliveryDueInMs(pool: Pool): Promise<number | null> {
  const { rows } = await pool.query<{ ms: number | null }>(
    `SELECT (EXTRACT(EPOCH FROM least(
               (SELECT min(greatest(d.dispatch_after, d.dispatch_lease_until)) FROM deliveries d
                 WHERE ${WAITING} AND ${WITHIN_RECOVERY_PACE}),
               (SELECT min(dispatch_lease_until) FROM events WHERE dispatched_at IS NULL AND first_attempt_place IS NOT NULL)
             ) - now()) * 1000)::float8 AS ms`,
  );
  return rows[0]?.ms ?? null;
}
