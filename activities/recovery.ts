import type { Client } from '@temporalio/client';
import type { RecoveryBatchInput, RecoveryBatchResult } from '../core/delivery-contract';
import type { Pool } from '../domain/database';
import { startRecoveryBatch as startBatch } from '../domain/redelivery';
import type { Config } from '../infra/config';

/** The recovery workflow's one activity: start its next deliveries (domain/redelivery.ts). */
export function createRecoveryActivities(deps: { config: Config; pool: Pool; temporal?: Client }) {
  return {
    async startRecoveryBatch(input: RecoveryBatchInput): Promise<RecoveryBatchResult> {
      if (!deps.temporal) throw new Error('startRecoveryBatch needs a Temporal client in the activity dependencies');
      return startBatch({ pool: deps.pool, temporal: deps.temporal, config: deps.config }, input);
    },
  };
}
