import { describe, expect, it } from 'vitest';
import { publishEvent } from '../../../domain/events';
import { createEndpoint, parcel } from '../../helpers/delivery';
import { testConfig } from '../../helpers/env';
import { createAccount } from '../../helpers/fixtures';
import { useDeliveryHarness, type DeliveryHarness } from '../../helpers/harness';
import { workflowCreatorOf } from '../../helpers/temporal';
import { waitFor } from '../../helpers/wait';

/**
 * WORKFLOW_THREAD (worker/worker.ts): `pool` by default runs workflow code in the SDK's workflow thread, `main` in
 * the worker's main thread (the patch's option `workflowsInMainThread`). Each describe runs its own worker and
 * checks both which path the SDK took (its workflow creator, a private field: the patch has no other trace) and
 * that a delivery with a retry still works on it, the retry's timer and the second activation included.
 */
async function deliverAfterOneRetry(h: DeliveryHarness, path: string): Promise<void> {
  h.receiver.script(path, (index) => ({ status: index === 0 ? 503 : 200 }));
  const accountId = await createAccount(h.tw.pool);
  await createEndpoint(h.tw.pool, { accountId, url: `${h.receiver.url}${path}` });
  const published = await publishEvent({ pool: h.tw.pool }, { accountId, livemode: false, type: 'parcel.created', data: { parcel: parcel() } });
  await waitFor(() => h.receiver.at(path).length === 2, { what: 'both attempts' });
  // The workflow ends with the success: the second activation (the timer's) ran and its history completed.
  await h.tw.client.workflow.getHandle(published.workflowId as string).result();
  const attempts = new Set(h.receiver.at(path).map((r) => r.headers['service-delivery']));
  expect(attempts.size).toBe(2);
}

describe('workflow thread: WORKFLOW_THREAD=main', () => {
  const h = useDeliveryHarness(testConfig({ DELIVERY_RETRY_DELAYS: '100ms', WORKFLOW_THREAD: 'main' }));

  it('runs workflows in the main thread, and delivers after a retry', async () => {
    expect(workflowCreatorOf(h.tw.worker).constructor.name).toBe('ReusableVMWorkflowCreator');
    await deliverAfterOneRetry(h, '/thread-main');
  });
});

describe('workflow thread: pool by default', () => {
  const h = useDeliveryHarness(testConfig({ DELIVERY_RETRY_DELAYS: '100ms' }));

  it("runs workflows in the SDK's thread, and delivers after a retry", async () => {
    expect(workflowCreatorOf(h.tw.worker).constructor.name).toBe('ThreadedVMWorkflowCreator');
    await deliverAfterOneRetry(h, '/thread-pool');
  });
});
