import type { DeliveryTrigger } from '../core/delivery-contract';
import { withTransaction, type Db, type Pool } from './pool';

/**
 * Table deliveries: one ladder of attempts of one event to one endpoint, with what started it. Automatic
 * deliveries are made with their event (db/events.ts), progress is written with each attempt
 * (db/delivery-attempts.ts); this module holds the rest.
 */

/**
 * A fresh delivery id made in SQL, for rows made by set-based statements: dly_ + a uuid's 32 hex digits (as
 * attempt ids are dlv_ + 32 hex digits), random like newId's.
 */
export const SQL_NEW_DELIVERY_ID = `'dly_' || replace(gen_random_uuid()::text, '-', '')`;

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed' | 'skipped';

export interface DeliveryRow {
  id: string;
  event_id: string;
  endpoint_id: string;
  account_id: string;
  livemode: boolean;
  trigger: DeliveryTrigger;
  status: DeliveryStatus;
  reason: string | null;
  attempts: number;
  last_status_code: number | null;
  last_attempt_at: Date | null;
  /** An ordered delivery's lane check found it must wait for this event's delivery (db/parcel-lanes.ts). */
  waiting_for: string | null;
  created_at: Date;
}

/** Which delivery: its id, or (for attempts of older histories) the event's automatic delivery to the endpoint. */
export interface DeliveryRef {
  deliveryId?: string;
  eventId: string;
  endpointId: string;
}

/**
 * The attempt checked the endpoint and posted nothing: the delivery ends with the reason, unless it already ended.
 * The rate-limit place the attempt held (`reservedSecond`), if still to come, is given back when the delivery ends
 * here, so once however often the skip is written.
 */
export async function markDeliverySkipped(
  pool: Pool,
  ref: DeliveryRef & { reservedSecond?: number },
  reason: string,
): Promise<void> {
  await pool.query(
    `WITH skipped AS (
       UPDATE deliveries SET status = 'skipped', reason = $4
        WHERE id = COALESCE($1::text,
                            (SELECT id FROM deliveries WHERE event_id = $2 AND endpoint_id = $3 AND trigger = 'automatic'))
          AND status = 'pending'
       RETURNING 1
     )
     SELECT release_rate_place($3, $5::bigint) FROM skipped WHERE $5::bigint IS NOT NULL`,
    [ref.deliveryId ?? null, ref.eventId, ref.endpointId, reason, ref.reservedSecond ?? null],
  );
}

/** Every delivery of an event, oldest first (the order they were made in). */
export async function listEventDeliveries(pool: Pool, eventId: string): Promise<DeliveryRow[]> {
  const { rows } = await pool.query<DeliveryRow>(
    'SELECT * FROM deliveries WHERE event_id = $1 ORDER BY created_at, id',
    [eventId],
  );
  return rows;
}

/**
 * New deliveries of one event (resend), one per endpoint, in one statement. Stored waiting for the outbox
 * (db/outbox.ts): a worker's dispatcher starts each one's workflow.
 */
export async function insertDeliveries(
  db: Db,
  scope: { accountId: string; livemode: boolean },
  input: { eventId: string; endpointIds: string[]; trigger: DeliveryTrigger },
): Promise<void> {
  // Only an event of the scope, to its own registered, enabled endpoints: any other id adds nothing.
  await db.query(
    `INSERT INTO deliveries (id, event_id, endpoint_id, account_id, livemode, trigger, api_version)
     SELECT ${SQL_NEW_DELIVERY_ID}, ev.id, we.id, ev.account_id, ev.livemode, $3, we.api_version
       FROM events ev
       JOIN webhook_endpoints we
         ON we.id = ANY($2::text[]) AND we.account_id = ev.account_id AND we.livemode = ev.livemode
        AND we.deleted_at IS NULL AND we.disabled_at IS NULL
      WHERE ev.id = $1 AND ev.account_id = $4 AND ev.livemode = $5`,
    [input.eventId, input.endpointIds, input.trigger, scope.accountId, scope.livemode],
  );
}

/**
 * A recovery: a `recover` delivery to the endpoint of every event created in [since, until] that was meant for
 * it (it has a delivery of it: the snapshot's automatic one, a resend, a test) and none of whose deliveries to
 * it succeeded or is still running. The lock makes two concurrent calls for one endpoint take turns, so the
 * second sees the first's pending rows and makes none. Each delivery may start `intervalMs` after the one
 * before it, oldest event first, from now or from the last one still waiting of an earlier recovery of the
 * endpoint: however many recoveries are asked for, the endpoint gets one steady pace. Only an endpoint of the
 * account and mode given, registered: any other endpoint gets nothing.
 */
export async function insertRecoveryDeliveries(
  pool: Pool,
  input: {
    recoveryId: string;
    endpointId: string;
    accountId: string;
    livemode: boolean;
    since: number;
    until: number;
    intervalMs: number;
  },
): Promise<number> {
  return withTransaction(pool, async (tx) => {
    await tx.query(`SELECT pg_advisory_xact_lock(hashtext('recover:' || $1))`, [input.endpointId]);
    const { rows } = await tx.query<{ count: number }>(
      `WITH pace AS (
         SELECT make_interval(secs => $7::float8 / 1000) AS step
       ), first AS (
         SELECT GREATEST(now(), COALESCE(max(d.dispatch_after) + pace.step, now())) AS at
           FROM pace LEFT JOIN deliveries d
             ON d.endpoint_id = $2 AND d.trigger = 'recover' AND d.dispatched_at IS NULL
          GROUP BY pace.step
       ), made AS (
         INSERT INTO deliveries (id, event_id, endpoint_id, account_id, livemode, trigger, recovery_id, dispatch_after, api_version)
         SELECT ${SQL_NEW_DELIVERY_ID}, ev.id, $2, ev.account_id, ev.livemode, 'recover', $1, first.at + pace.step * (ev.n - 1),
                (SELECT api_version FROM webhook_endpoints WHERE id = $2)
           FROM (SELECT id, account_id, livemode, row_number() OVER (ORDER BY ev.inserted_at, ev.id) AS n FROM events ev
                  WHERE ev.account_id = $3 AND ev.livemode = $4 AND ev.created BETWEEN $5 AND $6
                    AND EXISTS (SELECT 1 FROM webhook_endpoints we
                                 WHERE we.id = $2 AND we.account_id = $3 AND we.livemode = $4 AND we.deleted_at IS NULL)
                    AND EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = ev.id AND d.endpoint_id = $2)
                    AND NOT EXISTS (SELECT 1 FROM deliveries d
                                     WHERE d.event_id = ev.id AND d.endpoint_id = $2 AND d.status IN ('succeeded', 'pending'))) ev,
                first, pace
         RETURNING 1
       )
       SELECT count(*)::integer AS count FROM made`,
      [input.recoveryId, input.endpointId, input.accountId, input.livemode, input.since, input.until, input.intervalMs],
    );
    return rows[0]?.count ?? 0;
  });
}

/** Endpoints of this event's deliveries, of its account and mode, still registered and not disabled: what "resend to all" reaches. */
export async function liveEndpointsOfEvent(
  pool: Pool,
  scope: { accountId: string; livemode: boolean },
  eventId: string,
): Promise<string[]> {
  const { rows } = await pool.query<{ endpoint_id: string }>(
    `SELECT DISTINCT d.endpoint_id FROM deliveries d JOIN webhook_endpoints we ON we.id = d.endpoint_id
      WHERE d.event_id = $1 AND we.account_id = $2 AND we.livemode = $3 AND we.deleted_at IS NULL AND we.disabled_at IS NULL
      ORDER BY d.endpoint_id`,
    [eventId, scope.accountId, scope.livemode],
  );
  return rows.map((row) => row.endpoint_id);
}

/** The account's redeliveries (any trigger but automatic) neither delivered nor given up, both modes together. */
export async function countPendingRedeliveries(pool: Pool, accountId: string): Promise<number> {
  const { rows } = await pool.query<{ count: number }>(
    `SELECT count(*)::int AS count FROM deliveries
      WHERE account_id = $1 AND status = 'pending' AND trigger <> 'automatic'`,
    [accountId],
  );
  return rows[0]?.count ?? 0;
}
