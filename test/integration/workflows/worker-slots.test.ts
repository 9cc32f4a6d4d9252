import { describe, expect, it } from 'vitest';
import { publishEvent } from '../../../src/domain/events';
import { createEndpoint, deliveryResult, parcel } from '../../helpers/delivery';
import { testConfig } from '../../helpers/env';
import { createAccount } from '../../helpers/fixtures';
import { useDeliveryHarness } from '../../helpers/harness';
import { waitFor } from '../../helpers/wait';

/** More than the SDK's 100 activity slots, which slow receivers alone would have filled. */
const HELD = 110;
const WORKFLOW_TASKS = 8;

/**
 * An attempt the workflow makes holds an activity slot while the receiver answers, so the worker's slots are sized
 * for deliveries (WORKER_CONCURRENCY, src/worker/worker.ts deliverySlots): many slow receivers must not stall the
 * rest. The outbox makes each attempt 1 and the receiver fails it at once; attempt 2, the workflow's, is held.
 */
describe('worker slots: slow receivers do not hold up other deliveries', () => {
  // Workflow-task slots are sized apart (WORKER_WORKFLOW_TASKS): a few of them do not bound the open posts.
  const h = useDeliveryHarness(
    testConfig({
      DELIVERY_RETRY_DELAYS: '50ms',
      DELIVERY_TIMEOUT: '30s',
      WORKER_WORKFLOW_TASKS: String(WORKFLOW_TASKS),
    }),
  );

  it(`keeps ${HELD} posts open at once and still delivers another endpoint's event meanwhile`, async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    try {
      const slowAccount = await createAccount(h.tw.pool);
      await createEndpoint(h.tw.pool, { accountId: slowAccount, url: `${h.receiver.url}/held` });
      // Each event's first post fails at once; its second (the workflow's attempt 2) is held.
      const seen = new Set<string>();
      h.receiver.script('/held', (_, request) => {
        const id = String(request.headers['webhook-id']);
        if (seen.has(id)) return { status: 200, until: held };
        seen.add(id);
        return { status: 500 };
      });
      const fastAccount = await createAccount(h.tw.pool);
      await createEndpoint(h.tw.pool, { accountId: fastAccount, url: `${h.receiver.url}/fast` });

      const slow = [];
      for (let i = 0; i < HELD; i++) {
        slow.push(
          await publishEvent(
            { pool: h.tw.pool },
            { accountId: slowAccount, livemode: false, type: 'parcel.created', data: { parcel: parcel() } },
          ),
        );
      }
      expect(h.tw.worker.options.tuner.workflowTaskSlotSupplier).toMatchObject({ numSlots: WORKFLOW_TASKS });
      // With the SDK's default slots only 100 of these could ever be open at once.
      await waitFor(() => h.receiver.at('/held').length === 2 * HELD, {
        timeoutMs: 20_000,
        what: `${HELD} held posts`,
      });

      const fast = await publishEvent(
        { pool: h.tw.pool },
        { accountId: fastAccount, livemode: false, type: 'parcel.created', data: { parcel: parcel() } },
      );
      expect(await deliveryResult(h.tw.client, fast.event.id)).toMatchObject({
        endpoints: [{ outcome: 'delivered', attempts: 1 }],
      });
      expect(h.receiver.at('/fast')).toHaveLength(1);

      release();
      const results = await Promise.all(slow.map((p) => deliveryResult(h.tw.client, p.event.id)));
      for (const result of results)
        expect(result).toMatchObject({ endpoints: [{ outcome: 'delivered', attempts: 2 }] });
      expect(h.receiver.at('/held')).toHaveLength(2 * HELD);
    } finally {
      release();
    }
  });
});
