import { continueAsNew, proxyActivities, sleep } from '@temporalio/workflow';
import type { DeliveryActivities, RecoverEndpointInput, RecoverEndpointResult } from '../core/delivery-contract';
import {
  RECOVERY_BATCH_INTERVAL_MS,
  RECOVERY_BATCH_RETRY,
  RECOVERY_BATCH_TIMEOUT,
  RECOVERY_BATCHES_PER_RUN,
} from '../core/delivery-policy';

const { startRecoveryBatch } = proxyActivities<DeliveryActivities>({
  startToCloseTimeout: RECOVERY_BATCH_TIMEOUT,
  retry: RECOVERY_BATCH_RETRY,
});

/**
 * One recovery (workflow id `recovery:<rcv_id>`): its deliveries are already stored, pending; this starts them,
 * `ratePerSecond` each second, each its own `delivery:<dly_id>` workflow on the usual ladder. A receiver that
 * just came back gets a steady trickle instead of its whole backlog at once. A batch is about 8 history events,
 * so a run continues as new every RECOVERY_BATCHES_PER_RUN batches and any backlog fits.
 */
export async function recoverEndpoint(input: RecoverEndpointInput): Promise<RecoverEndpointResult> {
  let after = input.afterDeliveryId ?? null;
  let started = input.started ?? 0;
  for (let batch = 0; batch < RECOVERY_BATCHES_PER_RUN; batch++) {
    const result = await startRecoveryBatch({ recoveryId: input.recoveryId, afterDeliveryId: after, limit: input.ratePerSecond });
    started += result.started;
    if (result.lastDeliveryId === null || result.started < input.ratePerSecond) {
      return { recoveryId: input.recoveryId, started };
    }
    after = result.lastDeliveryId;
    await sleep(RECOVERY_BATCH_INTERVAL_MS, { summary: `${started} deliveries started; next ${input.ratePerSecond} in 1s` });
  }
  return continueAsNew<typeof recoverEndpoint>({ ...input, afterDeliveryId: after, started });
}
