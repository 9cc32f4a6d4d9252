import { log } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import type { RetentionResult } from '../core/delivery-contract';
import { RETENTION_BATCH_SIZE } from '../core/delivery-policy';
import type { Pool } from '../domain/database';
import { deleteExpired } from '../domain/retention';
import type { Config } from '../infra/config';

export interface RetentionDeps {
  config: Config;
  pool: Pool;
  /** Asked which expired events still have a delivery workflow open. */
  temporal?: Client;
}

export function createRetentionActivities(deps: RetentionDeps) {
  return {
    /** One bounded batch; the cutoff is the worker's EVENT_RETENTION, read now. */
    async deleteExpiredBatch(): Promise<RetentionResult> {
      if (!deps.temporal) throw new Error('deleteExpiredBatch needs a Temporal client in the activity deps');
      const cutoff = new Date(Date.now() - deps.config.retention.eventRetentionMs);
      const result = await deleteExpired({ pool: deps.pool, temporal: deps.temporal }, { cutoff, limit: RETENTION_BATCH_SIZE });
      if (result.events > 0 || result.notifications > 0) log.info('retention: deleted', { ...result, cutoff: cutoff.toISOString() });
      return result;
    },
  };
}
