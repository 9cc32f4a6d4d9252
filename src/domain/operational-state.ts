import { readOperationalState } from '../db/operational-state';
import type { Pool } from '../db/pool';
import type { DatabaseState } from '../infra/metrics';

/**
 * The service's shared state as an operator watches it (failing endpoints, events waiting for their hand-off
 * to Temporal), for the metrics page. Both modes are always reported, so a series exists before it moves.
 */
export async function operationalState(pool: Pool): Promise<DatabaseState> {
  const row = await readOperationalState(pool);
  const failing = (livemode: boolean) => row.failing.find((r) => r.livemode === livemode)?.count ?? 0;
  return {
    failingEndpoints: [false, true].map((livemode) => ({ livemode, count: failing(livemode) })),
    outbox: { pending: row.outboxPending, oldestPendingAgeSeconds: row.outboxOldestAgeSeconds },
  };
}
