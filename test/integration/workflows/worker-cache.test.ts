import { describe, expect, it } from 'vitest';
import { publishEvent } from '../../../src/domain/events';
import { createEndpoint, parcel } from '../../helpers/delivery';
import { testConfig } from '../../helpers/env';
import { createAccount } from '../../helpers/fixtures';
import { useDeliveryHarness } from '../../helpers/harness';
import { waitFor } from '../../helpers/wait';

const CONCURRENCY = 3;
/** Several times the slots: events parked in backoff well past what the worker may hold. */
const PARKED = 12;

/**
 * Events waiting in backoff live on the Temporal server, not in the worker: its sticky cache holds one workflow
 * per slot (src/worker/worker.ts deliverySlots), so the worker's memory does not grow with a backlog.
 */
describe('worker cache: events parked in backoff are not held by the worker', () => {
  const h = useDeliveryHarness(testConfig({ WORKER_CONCURRENCY: String(CONCURRENCY), DELIVERY_RETRY_DELAYS: '1h' }));

  it(`caches at most ${CONCURRENCY} workflows while ${PARKED} wait for their retry`, async () => {
    const accountId = await createAccount(h.tw.pool);
    await createEndpoint(h.tw.pool, { accountId, url: `${h.receiver.url}/down` });
    h.receiver.script('/down', { status: 500 });
    const handles = [];
    for (let i = 0; i < PARKED; i++) {
      const published = await publishEvent(
        { pool: h.tw.pool },
        { accountId, livemode: false, type: 'parcel.created', data: { parcel: parcel() } },
      );
      handles.push(h.tw.client.workflow.getHandle(`event:${published.event.id}`));
    }
    try {
      // Each workflow has failed its first attempt and sleeps in its retry timer.
      for (const handle of handles) {
        await waitFor(async () => (await handle.fetchHistory()).events?.some((e) => e.timerStartedEventAttributes), {
          timeoutMs: 60_000,
          what: `${handle.workflowId} waiting for its retry`,
        });
      }
      expect(h.receiver.at('/down')).toHaveLength(PARKED);
      const { numCachedWorkflows } = h.tw.worker.getStatus();
      expect(numCachedWorkflows).toBeGreaterThan(0);
      expect(numCachedWorkflows).toBeLessThanOrEqual(CONCURRENCY);
      expect(h.tw.worker.options.maxCachedWorkflows).toBe(CONCURRENCY);
      // As many workflow tasks as cached workflows by default (WORKER_WORKFLOW_TASKS), never more: the SDK's rule.
      expect(h.tw.worker.options.tuner.workflowTaskSlotSupplier).toMatchObject({
        type: 'fixed-size',
        numSlots: CONCURRENCY,
      });
    } finally {
      await Promise.all(handles.map((handle) => handle.terminate('test: cache checked').catch(() => undefined)));
    }
  });
});
