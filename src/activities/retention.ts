import { log } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import type { RetentionCursor, RetentionResult } from '../core/delivery-contract';
import { RETENTION_ACTIVITY_BUDGET_MS, RETENTION_BATCH_SIZE } from '../core/delivery-policy';
import type { Pool } from '../domain/database';
import { purgeExpired } from '../domain/retention';
import type { Config } from '../infra/config';

export interface RetentionDeps {
  config: Config;
  pool: Pool;
  /** Asked which expired events still have a delivery workflow open. */
  temporal?: Client;
}

export function createRetentionActivities(deps: RetentionDeps) {
  return {
    /**
     * Bounded batches from the cursor, one after the other while there is work, for at most
     * RETENTION_ACTIVITY_BUDGET_MS; the cutoff is the worker's EVENT_RETENTION, read now.
     */
    async deleteExpiredBatch(after?: RetentionCursor): Promise<RetentionResult> {
      if (!deps.temporal) throw new Error('deleteExpiredBatch needs a Temporal client in the activity deps');
      const cutoff = new Date(Date.now() - deps.config.retention.eventRetentionMs);
      const { batches, ...result } = await purgeExpired(
        { pool: deps.pool, temporal: deps.temporal },
        { cutoff, limit: RETENTION_BATCH_SIZE, after, budgetMs: RETENTION_ACTIVITY_BUDGET_MS },
      );
      if (result.events > 0 || result.notifications > 0)
        log.info('retention: deleted', { ...result, batches, cutoff: cutoff.toISOString() });
      return result;
    },
  };
}
