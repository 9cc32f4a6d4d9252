import type { AttemptRecord, RecordResult } from '../core/delivery-contract';
import { recordAttempt as storeAttempt } from '../domain/deliveries';
import type { Pool } from '../domain/database';

/**
 * Writes a record signAndPost could not (database down after posting, or the activity was lost). Retried by
 * Temporal until Postgres answers; idempotent on (endpoint, event, attempt), so the first writer wins.
 */
export function createRecordAttempt(deps: { pool: Pool }) {
  return async function recordAttempt(record: AttemptRecord): Promise<RecordResult> {
    return storeAttempt(deps.pool, record);
  };
}
