import {
  EXPIRED_REASON,
  type AttemptRecord,
  type DeliveryTrigger,
  type ExpiryRecord,
  type RecordResult,
} from '../core/delivery-contract';
import { LATENCY_BUCKETS, latencyBucket, oneResponse } from '../core/delivery-stats';
import { preparedStatement, type Db, type Pool } from './pool';

/**
 * Table delivery_attempts: the engine writes one row per attempt (insertAttempt), the API reads the deliveries
 * log (listDeliveryAttempts). The record written is the contract's AttemptRecord (core/delivery-contract.ts).
 */

// A delivery after the attempt $12 (succeeded) with $14 (no attempt follows).
const NEW_STATUS = `CASE WHEN $12::boolean THEN 'succeeded' WHEN $14::boolean THEN 'failed' ELSE 'pending' END`;
const NEW_REASON = `CASE WHEN NOT $12::boolean AND $14::boolean THEN 'attempts_exhausted' END`;

const INSERT_ATTEMPT = preparedStatement(
  'delivery_attempts_insert',
  `WITH inserted AS (
       INSERT INTO delivery_attempts
         (id, endpoint_id, event_id, event_type, account_id, livemode, attempt,
          status_code, response_body, error, duration_ms, succeeded, delivery_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13::text)
       ON CONFLICT (delivery_id, attempt) DO NOTHING
       RETURNING succeeded
     ), progressed AS (
       UPDATE deliveries
          SET attempts = GREATEST(attempts, $7), last_status_code = $8, last_attempt_at = now(),
              -- a delivery stopped while this attempt was in flight (endpoint disabled) stays stopped unless it succeeded
              status = CASE WHEN deliveries.status = 'skipped' AND NOT $12::boolean THEN 'skipped' ELSE ${NEW_STATUS} END,
              reason = CASE WHEN deliveries.status = 'skipped' AND NOT $12::boolean THEN deliveries.reason ELSE ${NEW_REASON} END
        WHERE id = $13::text AND EXISTS (SELECT 1 FROM inserted)
        RETURNING id
     ), reset AS (
       UPDATE webhook_endpoints SET abandoned_streak = 0, status = 'enabled'
        WHERE id = $2 AND $12::boolean AND (abandoned_streak > 0 OR status = 'failing')
        RETURNING id
     ), paused AS (
       -- A Retry-After answer (never a success, so never the row reset updates): nobody posts before it.
       UPDATE webhook_endpoints SET not_before = GREATEST(not_before, now() + $15::float8 * interval '1 millisecond')
        WHERE id = $2 AND $15::float8 IS NOT NULL AND NOT $12::boolean AND EXISTS (SELECT 1 FROM inserted)
     ), counted AS (
       -- the charts' hourly counts (db/delivery-stats.ts): $16 the shard, $17 the response's histogram bucket
       INSERT INTO delivery_hourly_stats AS s
         (endpoint_id, hour, shard, account_id, livemode, succeeded, failed, abandoned, latency_histogram)
       SELECT $2, date_trunc('hour', now(), 'UTC'), $16, $5, $6, $12::boolean::integer,
              (NOT $12::boolean AND NOT $14::boolean)::integer, (NOT $12::boolean AND $14::boolean)::integer, $18::integer[]
         FROM inserted
       ON CONFLICT (endpoint_id, hour, shard) DO UPDATE
          SET succeeded = s.succeeded + EXCLUDED.succeeded, failed = s.failed + EXCLUDED.failed,
              abandoned = s.abandoned + EXCLUDED.abandoned,
              latency_histogram[$17] = s.latency_histogram[$17] + EXCLUDED.latency_histogram[$17]
     )
     SELECT COALESCE(
              (SELECT succeeded FROM inserted),
              (SELECT succeeded FROM delivery_attempts WHERE delivery_id = $13::text AND attempt = $7)
            ) AS succeeded,
            EXISTS (SELECT 1 FROM reset) AS recovered`,
);

/** Shards of an endpoint's hour in delivery_hourly_stats: concurrent attempts to one endpoint spread over them. */
const STATS_SHARDS = 8;

/**
 * One round trip: the attempt row (idempotent on delivery and attempt, so the first writer wins), its delivery's
 * progress (status, attempts, last status code and time), its count in the endpoint's hour (only when this
 * statement recorded it) and, on success, the reset of the endpoint's failing mark; an answer with Retry-After sets
 * the endpoint's not_before (every attempt to it waits until then). The reset only touches a row that has something to reset, so the common success costs no extra write;
 * it is here, not in db/endpoints.ts, because a second statement would be a second round trip on every delivery.
 */
export async function insertAttempt(pool: Db, record: AttemptRecord): Promise<RecordResult> {
  // Response times of answers only: a refused connection is fast and a timeout is the limit, neither the receiver's.
  const bucket = record.statusCode === null ? 1 : latencyBucket(record.durationMs);
  const histogram = record.statusCode === null ? new Array<number>(LATENCY_BUCKETS).fill(0) : oneResponse(bucket);
  const { rows } = await pool.query<{ succeeded: boolean | null; recovered: boolean }>({
    ...INSERT_ATTEMPT,
    values: [
      record.id,
      record.endpointId,
      record.eventId,
      record.eventType,
      record.accountId,
      record.livemode,
      record.attempt,
      record.statusCode,
      record.responseBody,
      record.error,
      record.durationMs,
      record.succeeded,
      record.deliveryId,
      record.finalAttempt,
      record.retryAfterMs ?? null,
      Math.floor(Math.random() * STATS_SHARDS),
      bucket,
      histogram,
    ],
  });
  const row = rows[0];
  return { succeeded: row?.succeeded ?? record.succeeded, recovered: row?.recovered ?? false };
}

/**
 * A delivery given up at its max age: a row with no answer and the reason under the id of the attempt it did not
 * make, and the delivery failed with that reason, unless it already ended. Idempotent on (delivery, attempt).
 */
export async function insertExpiry(pool: Pool, record: ExpiryRecord): Promise<void> {
  await pool.query(
    `WITH inserted AS (
         INSERT INTO delivery_attempts
           (id, endpoint_id, event_id, event_type, account_id, livemode, attempt,
            status_code, response_body, error, duration_ms, succeeded, delivery_id, reason)
         VALUES ($1, $2, $3, $4, $5, $6, $7, NULL, NULL, NULL, 0, false, $8::text, $9)
         ON CONFLICT DO NOTHING
         RETURNING 1
       ), released AS (
         -- the place it held goes back once, with the record's first write
         SELECT release_rate_place($2, $10::bigint) WHERE $10::bigint IS NOT NULL AND EXISTS (SELECT 1 FROM inserted)
       ), ended AS (
         UPDATE deliveries SET status = 'failed', reason = $9, waiting_for = NULL
          WHERE id = $8::text AND status = 'pending'
       )
     SELECT count(*) FROM released`,
    [
      record.id,
      record.endpointId,
      record.eventId,
      record.eventType,
      record.accountId,
      record.livemode,
      record.attempt,
      record.deliveryId,
      EXPIRED_REASON,
      record.reservedSecond ?? null,
    ],
  );
}

/** A row as the deliveries log reads it. */
export interface DeliveryAttemptRow {
  id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  attempt: number;
  status_code: number | null;
  response_body: string | null;
  error: string | null;
  duration_ms: number;
  succeeded: boolean;
  /** Set on the row of a delivery given up without an attempt (`expired`); null on every attempt made. */
  reason: string | null;
  livemode: boolean;
  trigger: DeliveryTrigger;
  created_at: Date;
}

export interface DeliveryAttemptFilter {
  /** The caller has already checked that the endpoint belongs to this account and mode. */
  endpointId: string;
  accountId: string;
  limit: number;
  startingAfter?: string;
  eventId?: string;
  outcome?: 'succeeded' | 'failed';
}

const COLUMNS =
  'id, endpoint_id, event_id, event_type, attempt, status_code, response_body, error, duration_ms, succeeded, reason, livemode, created_at, ' +
  '(SELECT d.trigger FROM deliveries d WHERE d.id = delivery_attempts.delivery_id) AS trigger';

/**
 * Newest first (created_at DESC, id DESC), matching delivery_attempts_endpoint_idx. Returns undefined when
 * `startingAfter` is not an attempt of this endpoint. Fetches limit + 1 rows to learn has_more.
 */
export async function listDeliveryAttempts(
  pool: Pool,
  filter: DeliveryAttemptFilter,
): Promise<{ rows: DeliveryAttemptRow[]; hasMore: boolean } | undefined> {
  const params: unknown[] = [filter.endpointId, filter.accountId];
  const where = ['endpoint_id = $1', 'account_id = $2'];
  const param = (value: unknown): string => {
    params.push(value);
    return `$${params.length}`;
  };
  if (filter.startingAfter !== undefined) {
    const cursor = await pool.query('SELECT 1 FROM delivery_attempts WHERE id = $1 AND endpoint_id = $2', [
      filter.startingAfter,
      filter.endpointId,
    ]);
    if (cursor.rowCount === 0) return undefined;
    // Compared in SQL so the cursor keeps created_at's microseconds.
    where.push(
      `(created_at, id) < (SELECT created_at, id FROM delivery_attempts WHERE id = ${param(filter.startingAfter)})`,
    );
  }
  if (filter.eventId !== undefined) where.push(`event_id = ${param(filter.eventId)}`);
  if (filter.outcome !== undefined) where.push(`succeeded = ${param(filter.outcome === 'succeeded')}`);
  const limit = param(filter.limit + 1);
  const { rows } = await pool.query<DeliveryAttemptRow>(
    `SELECT ${COLUMNS} FROM delivery_attempts
      WHERE ${where.join(' AND ')}
      ORDER BY created_at DESC, id DESC
      LIMIT ${limit}`,
    params,
  );
  return { rows: rows.slice(0, filter.limit), hasMore: rows.length > filter.limit };
}

/** Which attempt of which kind of delivery an attempt id is (listen prints it); undefined until it is recorded. */
export async function findAttemptSummary(
  pool: Pool,
  attemptId: string,
): Promise<{ attempt: number; trigger: DeliveryTrigger } | undefined> {
  const { rows } = await pool.query<{ attempt: number; trigger: DeliveryTrigger }>(
    `SELECT a.attempt, d.trigger FROM delivery_attempts a JOIN deliveries d ON d.id = a.delivery_id WHERE a.id = $1`,
    [attemptId],
  );
  return rows[0];
}

/** The stored answers of the attempts of these events (erasure), locked until the transaction ends. */
export async function lockResponseBodies(
  tx: Db,
  eventIds: readonly string[],
): Promise<{ id: string; response_body: string }[]> {
  const { rows } = await tx.query<{ id: string; response_body: string }>(
    `SELECT id, response_body FROM delivery_attempts
      WHERE event_id = ANY ($1::text[]) AND response_body IS NOT NULL ORDER BY id FOR UPDATE`,
    [eventIds],
  );
  return rows;
}

export async function replaceResponseBodies(
  tx: Db,
  bodies: readonly { id: string; response_body: string }[],
): Promise<void> {
  if (bodies.length === 0) return;
  await tx.query(
    `UPDATE delivery_attempts a SET response_body = b.body
       FROM unnest($1::text[], $2::text[]) AS b(id, body)
      WHERE a.id = b.id`,
    [bodies.map((b) => b.id), bodies.map((b) => b.response_body)],
  );
}
