import { recordExpiry as storeExpiry, recordAttempt as storeAttempt } from '../attempt';
import type { AttemptRecord, ExpiryRecord, RecordResult } from '../core/delivery-contract';
import type { Pool } from '../domain/database';

/**
 * Writes a record the try could not (database down after posting, or the try was lost). Retried by Temporal
 * until Postgres answers; idempotent on (delivery, attempt), so the first writer wins.
 */
export function createRecordAttempt(deps: { pool: Pool }) {
  return async function recordAttempt(record: AttemptRecord): Promise<RecordResult> {
    return storeAttempt(deps.pool, record);
  };
}

/** Gives a delivery up at its max age (attempt/expire.ts); retried until Postgres answers, idempotent. */
export function createRecordExpiry(deps: { pool: Pool }) {
  return async function recordExpiry(record: ExpiryRecord): Promise<void> {
    await storeExpiry(deps.pool, record);
  };
}
