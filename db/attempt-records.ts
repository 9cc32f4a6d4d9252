import type { AttemptRecord, RecordResult } from '../core/delivery-contract';
import type { Pool } from './pool';

/**
 * Writing delivery attempts (table delivery_attempts). The API's listing lives in db/delivery-attempts.ts;
 * this file is the delivery engine's side, kept apart so the two never edit one file.
 */


/**
 * One round trip: the attempt row (idempotent on endpoint, event, attempt) and, on success, the reset of the
 * endpoint's failing mark. The reset only touches a row that has something to reset, so the common success
 * costs no extra write.
 */
export async function insertAttempt(pool: Pool, record: AttemptRecord): Promise<RecordResult> {
  const { rows } = await pool.query<{ succeeded: boolean | null; recovered: boolean }>(
    `WITH inserted AS (
       INSERT INTO delivery_attempts
         (id, endpoint_id, event_id, event_type, account_id, livemode, attempt,
          status_code, response_body, error, duration_ms, succeeded)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
       ON CONFLICT (endpoint_id, event_id, attempt) DO NOTHING
       RETURNING succeeded
     ), reset AS (
       UPDATE webhook_endpoints SET abandoned_streak = 0, status = 'enabled'
        WHERE id = $2 AND $12::boolean AND (abandoned_streak > 0 OR status = 'failing')
        RETURNING id
     )
     SELECT COALESCE(
              (SELECT succeeded FROM inserted),
              (SELECT succeeded FROM delivery_attempts WHERE endpoint_id = $2 AND event_id = $3 AND attempt = $7)
            ) AS succeeded,
            EXISTS (SELECT 1 FROM reset) AS recovered`,
    [
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
    ],
  );
  const row = rows[0];
  return { succeeded: row?.succeeded ?? record.succeeded, recovered: row?.recovered ?? false };
}
