import { firstAttemptId } from '../core/first-attempt-id';
import { SQL_NEW_DELIVERY_ID } from './deliveries';
import { preparedStatement, type Db, type Pool } from './pool';

/** Table events: the exact body posted on every attempt and the fan-out snapshot taken at publish time. */

export interface EventRow {
  id: string;
  account_id: string;
  livemode: boolean;
  type: string;
  created: number;
  body: string;
  endpoint_ids: string[];
  /** false when the id already existed and this is the earlier row. */
  inserted: boolean;
  /** Some attempt of this event is recorded: its delivery workflow has run. */
  attempted: boolean;
  /** Endpoint id -> its automatic delivery (dly_...), for the workflow input. */
  delivery_ids: Record<string, string>;
  /** Its place among its parcel's events (1, 2, 3 ...); null for an event without a parcel. */
  sequence: number | null;
}

export interface NewEvent {
  id: string;
  accountId: string;
  livemode: boolean;
  type: string;
  created: number;
  /** The envelope without `sequence`: it is appended when the event has a parcel. */
  body: string;
  /** data.parcel.id: the event is numbered in this parcel's sequence. */
  parcelId: string | null;
  /** The publish's W3C traceparent (infra/tracing.ts), continued by the hand-off and every attempt. */
  traceParent?: string | null;
}

const FOREIGN_KEY_VIOLATION = '23503';
const UNIQUE_VIOLATION = '23505';

// An event stored earlier, with what a caller needs to start (or not restart) its delivery.
const EXISTING_COLUMNS = `id, account_id, livemode, type, created, body, endpoint_ids, sequence, false AS inserted,
       EXISTS (SELECT 1 FROM delivery_attempts WHERE event_id = $1) AS attempted,
       (SELECT COALESCE(jsonb_object_agg(endpoint_id, id), '{}') FROM deliveries
         WHERE event_id = $1 AND trigger = 'automatic') AS delivery_ids`;

// The stored body is the posted one: a numbered event's `sequence` is appended to the envelope in SQL, as its
// last member, since the number is only known inside the statement.
const NUMBERED_BODY = `CASE WHEN n.last_sequence IS NULL THEN $6
                            ELSE left($6, -1) || ',"sequence":' || n.last_sequence || '}' END`;

const INSERT_EVENT_WITH_FAN_OUT = preparedStatement(
  'events_insert_with_fan_out',
  `WITH targets AS (
         SELECT COALESCE(array_agg(id ORDER BY created_at, id), '{}') AS ids,
                COALESCE(array_agg(id ORDER BY created_at, id) FILTER (WHERE ordering = 'parcel'), '{}') AS ordered
           FROM webhook_endpoints
          WHERE account_id = $2 AND livemode = $3 AND deleted_at IS NULL AND disabled_at IS NULL
            AND (events = '{}' OR $4 = ANY (events))
       ), numbered AS (
         -- the parcel's next number; its row stays locked until commit, so one parcel's publishes take turns
         INSERT INTO parcel_sequences AS s (account_id, livemode, parcel_id, last_sequence)
         SELECT $2, $3, $7, 1 WHERE $7::text IS NOT NULL AND NOT EXISTS (SELECT 1 FROM events WHERE id = $1)
         ON CONFLICT (account_id, livemode, parcel_id) DO UPDATE SET last_sequence = s.last_sequence + 1
         RETURNING last_sequence
       ), inserted AS (
         -- no ON CONFLICT: an id a concurrent publish commits first fails this whole statement, number included
         -- nobody to deliver to: handed off as stored (db/outbox.ts)
         INSERT INTO events (id, account_id, livemode, type, created, body, endpoint_ids, dispatched_at,
                             parcel_id, sequence, ordered_endpoint_ids, trace_parent)
         SELECT $1, $2, $3, $4, $5, ${NUMBERED_BODY}, ids, CASE WHEN cardinality(ids) = 0 THEN now() END,
                $7, n.last_sequence, CASE WHEN $7::text IS NULL THEN '{}' ELSE ordered END, $8::text
           FROM targets LEFT JOIN numbered n ON true
          WHERE NOT EXISTS (SELECT 1 FROM events WHERE id = $1)
         RETURNING id, account_id, livemode, type, created, body, endpoint_ids, sequence
       ), automatic AS (
         -- a delivery renders the version its endpoint is on when it is made, on every attempt (core/versions)
         INSERT INTO deliveries (id, event_id, endpoint_id, account_id, livemode, trigger, api_version)
         SELECT ${SQL_NEW_DELIVERY_ID}, i.id, we.id, i.account_id, i.livemode, 'automatic', we.api_version
           FROM inserted i, unnest(i.endpoint_ids) AS target JOIN webhook_endpoints we ON we.id = target
         RETURNING endpoint_id, id
       )
       SELECT i.*, true AS inserted, false AS attempted,
              (SELECT COALESCE(jsonb_object_agg(endpoint_id, id), '{}') FROM automatic) AS delivery_ids
         FROM inserted i
       UNION ALL
       SELECT ${EXISTING_COLUMNS}
         FROM events WHERE id = $1 AND NOT EXISTS (SELECT 1 FROM inserted)`,
);

/**
 * One round trip: the subscribed endpoints (this account and mode, not removed, not disabled, all kinds or this
 * kind), the parcel's next number when the event has a parcel, the event with that snapshot and an automatic
 * delivery per endpoint, or the existing row when the id was already used. A parcel's numbers run 1, 2, 3 ...
 * without gaps: an id already stored takes no number, and an id a concurrent publish commits first fails the
 * statement, so the number it took is undone with it. Returns null when the account does not exist, and
 * undefined when a concurrent publish of the same id committed after this statement began.
 */
export async function insertEventWithFanOut(pool: Pool, event: NewEvent): Promise<EventRow | null | undefined> {
  try {
    const { rows } = await pool.query<EventRow>({
      ...INSERT_EVENT_WITH_FAN_OUT,
      values: [
        event.id,
        event.accountId,
        event.livemode,
        event.type,
        event.created,
        event.body,
        event.parcelId,
        event.traceParent ?? null,
      ],
    });
    return rows[0];
  } catch (err) {
    const { code, constraint } = err as { code?: string; constraint?: string };
    if (code === FOREIGN_KEY_VIOLATION) return null;
    if (code === UNIQUE_VIOLATION && constraint === 'events_pkey') return undefined;
    throw err;
  }
}

export async function findEvent(pool: Pool, id: string): Promise<Omit<EventRow, 'inserted'> | undefined> {
  const { rows } = await pool.query<EventRow>(`SELECT ${EXISTING_COLUMNS} FROM events WHERE id = $1`, [id]);
  return rows[0];
}

/** Where an event's delivery stands, from its deliveries (domain/event-log.ts explains each value). */
export type EventDeliveryState = 'delivered' | 'retrying' | 'abandoned' | 'none';

/** An event as merchants read it: the posted body, how many endpoints still have a delivery running, its state. */
export interface EventListRow {
  id: string;
  type: string;
  body: string;
  livemode: boolean;
  pending_webhooks: number;
  delivery_state: EventDeliveryState;
}

// Per endpoint the best of its deliveries counts (a resend that succeeded makes up for an abandoned delivery);
// an endpoint whose deliveries were all skipped was never sent the event and does not count.
const DELIVERY_STATE = `(SELECT CASE WHEN count(*) = 0 THEN 'none'
                WHEN bool_or(p.state = 'pending') THEN 'retrying'
                WHEN bool_or(p.state = 'failed') THEN 'abandoned'
                ELSE 'delivered' END
     FROM (SELECT CASE WHEN bool_or(d.status = 'succeeded') THEN 'succeeded'
                       WHEN bool_or(d.status = 'pending') THEN 'pending'
                       WHEN bool_or(d.status = 'failed') THEN 'failed' END AS state
             FROM deliveries d WHERE d.event_id = ev.id GROUP BY d.endpoint_id) p
    WHERE p.state IS NOT NULL)`;

const LIST_COLUMNS = `ev.id, ev.type, ev.body, ev.livemode,
  (SELECT count(DISTINCT d.endpoint_id)::integer FROM deliveries d WHERE d.event_id = ev.id AND d.status = 'pending') AS pending_webhooks,
  ${DELIVERY_STATE} AS delivery_state`;

export interface EventListFilter {
  type?: string;
  /** Only events in one of these states. */
  deliveryStates?: readonly EventDeliveryState[];
  /** The event with this id. */
  id?: string;
  /** Events about this parcel: its id, number or tracking number (migration event-filters, event_parcel_refs). */
  parcel?: string;
}

/**
 * Newest first by publication (inserted_at keeps the order of events of the same second), this account and mode
 * only. Returns undefined when `startingAfter` is not an event of theirs. Fetches limit + 1 rows for has_more.
 */
export async function listEventsOf(
  pool: Pool,
  scope: { accountId: string; livemode: boolean },
  page: { limit: number; startingAfter?: string } & EventListFilter,
): Promise<{ rows: EventListRow[]; hasMore: boolean } | undefined> {
  const params: unknown[] = [scope.accountId, scope.livemode, page.limit + 1];
  const where = ['ev.account_id = $1', 'ev.livemode = $2'];
  const param = (value: unknown): string => {
    params.push(value);
    return `$${params.length}`;
  };
  if (page.startingAfter !== undefined) {
    // By its key alone, so the plan is the same for every account; whose event it is is checked here.
    const cursor = await pool.query<{ account_id: string; livemode: boolean }>(
      'SELECT account_id, livemode FROM events WHERE id = $1',
      [page.startingAfter],
    );
    const owner = cursor.rows[0];
    if (!owner || owner.account_id !== scope.accountId || owner.livemode !== scope.livemode) return undefined;
    // Compared in SQL so the cursor keeps inserted_at's microseconds.
    where.push(
      `(ev.inserted_at, ev.id) < (SELECT inserted_at, id FROM events WHERE id = ${param(page.startingAfter)})`,
    );
  }
  if (page.type !== undefined) where.push(`ev.type = ${param(page.type)}`);
  if (page.id !== undefined) where.push(`ev.id = ${param(page.id)}`);
  if (page.parcel !== undefined) where.push(`event_parcel_refs(ev.body) @> ARRAY[${param(page.parcel)}::text]`);
  const states = page.deliveryStates;
  if (states !== undefined && !states.some((state) => state === 'delivered' || state === 'none')) {
    // Only unfinished states: read from the deliveries still pending or failed (deliveries_unfinished_idx).
    where.push(
      `ev.id IN (SELECT event_id FROM deliveries WHERE account_id = $1 AND livemode = $2 AND status IN ('pending', 'failed'))`,
    );
  }
  const stateFilter = states === undefined ? '' : `WHERE listed.delivery_state = ANY (${param(states)}::text[])`;
  const { rows } = await pool.query<EventListRow>(
    `SELECT id, type, body, livemode, pending_webhooks, delivery_state FROM (
       SELECT ${LIST_COLUMNS}, ev.inserted_at FROM events ev WHERE ${where.join(' AND ')}
     ) listed ${stateFilter}
      ORDER BY inserted_at DESC, id DESC LIMIT $3`,
    params,
  );
  return { rows: rows.slice(0, page.limit), hasMore: rows.length > page.limit };
}

export async function findEventOf(
  pool: Pool,
  scope: { accountId: string; livemode: boolean },
  id: string,
): Promise<EventListRow | undefined> {
  const { rows } = await pool.query<EventListRow>(
    `SELECT ${LIST_COLUMNS} FROM events ev WHERE ev.id = $1 AND ev.account_id = $2 AND ev.livemode = $3`,
    [id, scope.accountId, scope.livemode],
  );
  return rows[0];
}

/**
 * A test event: stored like any other (listed among the account's events) but with an empty fan-out snapshot,
 * since it goes to one endpoint only, through its one `test` delivery made in the same statement. The event has
 * no automatic delivery to hand off; its delivery waits in the outbox (db/outbox.ts) like a resend. Only to a
 * registered, enabled endpoint of the event's own account and mode: for any other, nothing is stored and false
 * comes back.
 */
export async function insertTestEvent(
  pool: Pool,
  event: Omit<NewEvent, 'parcelId'>,
  endpointId: string,
): Promise<boolean> {
  const { rowCount } = await pool.query(
    `WITH target AS (
       SELECT id, api_version FROM webhook_endpoints
        WHERE id = $7 AND account_id = $2 AND livemode = $3 AND deleted_at IS NULL AND disabled_at IS NULL
     ), inserted AS (
       INSERT INTO events (id, account_id, livemode, type, created, body, endpoint_ids, dispatched_at)
       SELECT $1, $2, $3, $4, $5, $6, '{}', now() FROM target
       RETURNING id, account_id, livemode
     )
     INSERT INTO deliveries (id, event_id, endpoint_id, account_id, livemode, trigger, api_version)
     SELECT ${SQL_NEW_DELIVERY_ID}, inserted.id, target.id, inserted.account_id, inserted.livemode, 'test', target.api_version FROM inserted, target`,
    [event.id, event.accountId, event.livemode, event.type, event.created, event.body, endpointId],
  );
  return rowCount === 1;
}

/**
 * Retention: events created before `cutoff`, oldest first, after the cursor of the previous batch. Read by
 * `created` (events_created_idx), the event's own time: an index that orders events by the time they were stored
 * would also offer the merchants' lists an order, and the planner would take it for a big account instead of
 * the account's own index.
 */
export async function listExpiredEvents(
  pool: Pool,
  cutoff: Date,
  limit: number,
  after?: { insertedAt: string; id: string },
): Promise<{ id: string; created: number }[]> {
  const { rows } = await pool.query<{ id: string; created: number }>(
    `SELECT id, created FROM events
      WHERE created < $1 AND ($3::bigint IS NULL OR (created, id) > ($3::bigint, $4::text))
      ORDER BY created, id
      LIMIT $2`,
    [
      Math.floor(cutoff.getTime() / 1000),
      limit,
      after ? Math.floor(Date.parse(after.insertedAt) / 1000) : null,
      after?.id ?? '',
    ],
  );
  return rows;
}

/**
 * Retention: deletes these events (still expired, and with no delivery pending) with their attempts and the
 * attempts' claims, deliveries (ON DELETE CASCADE) and abandonment records, in the caller's transaction. The
 * events are locked first: a delivery being added to one of them (a resend) waits for this, and one added just
 * before makes it keep the event. Returns how many events were deleted.
 */
export async function deleteEventsWithAttempts(tx: Db, ids: string[], cutoff: Date): Promise<number> {
  const { rows } = await tx.query<{ id: string }>(
    `SELECT id FROM events e
      WHERE id = ANY ($1::text[]) AND created < $2
        AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = e.id AND d.status = 'pending')
        FOR UPDATE`,
    [ids, Math.floor(cutoff.getTime() / 1000)],
  );
  const doomed = rows.map((row) => row.id);
  if (doomed.length === 0) return 0;
  // A claim outlives its record (db/attempt-claims.ts): it goes with it here, and so do the claims of the
  // outbox's attempts 1 that have none (left to the workflow, or never posted).
  const deliveries = await tx.query<{ id: string }>('SELECT id FROM deliveries WHERE event_id = ANY ($1::text[])', [
    doomed,
  ]);
  await tx.query(
    `DELETE FROM attempt_claims
      WHERE attempt_id IN (SELECT id FROM delivery_attempts WHERE event_id = ANY ($1::text[])) OR attempt_id = ANY ($2::text[])`,
    [doomed, deliveries.rows.map((row) => firstAttemptId(row.id))],
  );
  await tx.query('DELETE FROM delivery_attempts WHERE event_id = ANY ($1::text[])', [doomed]);
  await tx.query('DELETE FROM endpoint_abandonments WHERE event_id = ANY ($1::text[])', [doomed]);
  const deleted = await tx.query('DELETE FROM events WHERE id = ANY ($1::text[])', [doomed]);
  return deleted.rowCount ?? 0;
}

/** One event of a parcel, as erasure reads and rewrites it. */
export interface ParcelEventBody {
  id: string;
  type: string;
  body: string;
}

/**
 * Every stored event of one parcel of one account, in both modes (its parcel events and its settlements), locked
 * until the transaction ends: a concurrent erasure of the same parcel waits for this one.
 */
export async function lockParcelEvents(tx: Db, accountId: string, parcelId: string): Promise<ParcelEventBody[]> {
  const { rows } = await tx.query<ParcelEventBody>(
    `SELECT id, type, body FROM events WHERE account_id = $1 AND parcel_id = $2 ORDER BY id FOR UPDATE`,
    [accountId, parcelId],
  );
  return rows;
}

/**
 * Rewrites stored bodies (erasure): the bytes every later attempt posts and the API shows. Every event named is
 * marked erased, its body changed or not: an answer recorded for it from now on is stored without its body (the
 * trigger of migration parcel-erasure).
 */
export async function markEventsErased(tx: Db, events: readonly { id: string; body: string }[]): Promise<void> {
  await tx.query(
    `UPDATE events e SET body = b.body, erased_at = COALESCE(e.erased_at, now())
       FROM unnest($1::text[], $2::text[]) AS b(id, body)
      WHERE e.id = b.id`,
    [events.map((b) => b.id), events.map((b) => b.body)],
  );
}
