import { proxyActivities } from '@temporalio/workflow';
import type { DeliveryActivities } from '../core/delivery-contract';

const { probeDatabase } = proxyActivities<DeliveryActivities>({
  startToCloseTimeout: '10s',
  retry: { maximumAttempts: 3 },
});

/**
 * Proves a worker polls this task queue and reaches Postgres:
 * `temporal workflow execute --type healthProbe --task-queue parcel-webhooks`.
 */
export async function healthProbe(): Promise<{ worker: 'ok'; postgres: string }> {
  return { worker: 'ok', postgres: await probeDatabase() };
}
