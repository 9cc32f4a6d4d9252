import { describe, expect, it } from 'vitest';
import { publishEvent } from '../../../src/domain/events';
import { createEndpoint, deliveryResult, parcel } from '../../helpers/delivery';
import { testConfig } from '../../helpers/env';
import { createAccount } from '../../helpers/fixtures';
import { useDeliveryHarness } from '../../helpers/harness';
import { waitFor } from '../../helpers/wait';

/** More than the SDK's 40 workflow-task slots, which slow receivers alone would have filled. */
const HELD = 60;

/**
 * A local attempt holds its workflow task's slot while the receiver answers, so the worker's slots are sized for
 * deliveries (WORKER_CONCURRENCY, src/worker/worker.ts deliverySlots): many slow receivers must not stall the rest.
 */
describe('worker slots: slow receivers do not hold up other deliveries', () => {
  const h = useDeliveryHarness(testConfig({ DELIVERY_RETRY_DELAYS: '50ms', DELIVERY_TIMEOUT: '30s' }));

  it(`keeps ${HELD} posts open at once and still delivers another endpoint's event meanwhile`, async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    try {
      const slowAccount = await createAccount(h.tw.pool);
      await createEndpoint(h.tw.pool, { accountId: slowAccount, url: `${h.receiver.url}/held` });
      h.receiver.script('/held', { status: 200, until: held });
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
      // With the SDK's default slots only 40 of these could ever be open at once.
      await waitFor(() => h.receiver.at('/held').length === HELD, { timeoutMs: 20_000, what: `${HELD} held posts` });

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
        expect(result).toMatchObject({ endpoints: [{ outcome: 'delivered', attempts: 1 }] });
      expect(h.receiver.at('/held')).toHaveLength(HELD);
    } finally {
      release();
    }
  });
});
