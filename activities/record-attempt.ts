import type { AttemptRecord, RecordResult } from '../core/delivery-contract';
import { insertAttempt } from '../db/attempt-records';
import type { Pool } from '../db/pool';

/**
 * Writes a record signAndPost could not (database down after posting, or the activity was lost). Retried by
 * Temporal until Postgres answers; idempotent on (endpoint, event, attempt), so the first writer wins.
 */
export function createRecordAttempt(deps: { pool: Pool }) {
  return async function recordAttempt(record: AttemptRecord): Promise<RecordResult> {
    return insertAttempt(deps.pool, record);
  };
}
