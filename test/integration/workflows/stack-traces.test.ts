import { describe, expect, it } from 'vitest';
import { publishEvent } from '../../../domain/events';
import { createEndpoint, parcel } from '../../helpers/delivery';
import { testConfig } from '../../helpers/env';
import { createAccount } from '../../helpers/fixtures';
import { useDeliveryHarness, type DeliveryHarness } from '../../helpers/harness';
import { waitFor } from '../../helpers/wait';

/**
 * WORKFLOW_STACK_TRACES (worker/worker.ts, the worker option `workflowStackTraces` of
 * patches/@temporalio+worker+1.24.0.patch): off by default, the SDK records no stack per promise and Temporal's
 * stack trace query says so; on, the query shows where a waiting delivery is. Asked through the public client,
 * as the Temporal UI asks. Each describe runs its own worker, with its own workflow thread, so this also checks
 * the switch is per worker: this file's first worker (off) does not decide for the second.
 */
async function stackTraceOfWaitingDelivery(h: DeliveryHarness, path: string): Promise<PromiseSettledResult<string>> {
  h.receiver.script(path, { status: 503 });
  const accountId = await createAccount(h.tw.pool);
  await createEndpoint(h.tw.pool, { accountId, url: `${h.receiver.url}${path}` });
  const published = await publishEvent({ pool: h.tw.pool }, { accountId, livemode: false, type: 'parcel.created', data: { parcel: parcel() } });
  await waitFor(() => h.receiver.at(path).length === 1, { what: 'the first attempt' });
  const handle = h.tw.client.workflow.getHandle(published.workflowId as string);
  try {
    // Answered once the attempt's workflow task completes: the workflow then waits on its hour-long retry timer.
    const [result] = await Promise.allSettled([handle.query<string>('__stack_trace')]);
    return result;
  } finally {
    await handle.terminate('test done');
  }
}

describe('workflow stack traces: off by default', () => {
  const h = useDeliveryHarness(testConfig({ DELIVERY_RETRY_DELAYS: '1h', DELIVERY_TIMEOUT: '2s' }));

  it('records none, and the stack trace query says they are not enabled', async () => {
    const result = await stackTraceOfWaitingDelivery(h, '/stack-off');
    expect(result.status).toBe('rejected');
    expect(String((result as PromiseRejectedResult).reason)).toMatch(/stack traces are not enabled on this worker/);
  });
});

describe('workflow stack traces: WORKFLOW_STACK_TRACES=on', () => {
  const h = useDeliveryHarness(testConfig({ DELIVERY_RETRY_DELAYS: '1h', DELIVERY_TIMEOUT: '2s', WORKFLOW_STACK_TRACES: 'on' }));

  it('shows where the waiting delivery is, in the source', async () => {
    const result = await stackTraceOfWaitingDelivery(h, '/stack-on');
    expect(result.status).toBe('fulfilled');
    expect((result as PromiseFulfilledResult<string>).value).toMatch(/workflows\/deliver-event\.ts/);
  });
});
