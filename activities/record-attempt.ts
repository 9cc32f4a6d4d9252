import { recordAttempt as storeAttempt } from '../attempt';
import type { AttemptRecord, RecordResult } from '../core/delivery-contract';
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
