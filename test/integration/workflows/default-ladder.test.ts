import { describe, expect, it } from 'vitest';
import { publishEvent } from '../../../src/domain/events';
import { createEndpoint, parcel } from '../../helpers/delivery';
import { testConfig } from '../../helpers/env';
import { createAccount } from '../../helpers/fixtures';
import { useDeliveryHarness } from '../../helpers/harness';
import { waitFor } from '../../helpers/wait';

/**
 * A worker on the default configuration gives every event it starts the default ladder. A file of its own: the
 * ladder is the dispatching worker's (src/domain/outbox.ts), and one database has one set of dispatchers.
 */
describe('delivery: the default ladder', () => {
  const config = testConfig();
  const h = useDeliveryHarness(config);

  it('schedules the default ladder with the default configuration', async () => {
    expect(config.delivery.retryDelaysMs).toEqual([10_000, 60_000, 600_000, 3_600_000, 21_600_000]);
    const accountId = await createAccount(h.tw.pool);
    await createEndpoint(h.tw.pool, { accountId, url: `${h.receiver.url}/ladder` });
    h.receiver.script('/ladder', { status: 500 });
    const published = await publishEvent(
      { pool: h.tw.pool },
      { accountId, livemode: false, type: 'parcel.cancelled', data: { parcel: parcel({ status: 'CANCELLED' }) } },
    );
    const handle = h.tw.client.workflow.getHandle(`event:${published.event.id}`);
    try {
      const timer = await waitFor(
        async () => {
          const history = await handle.fetchHistory();
          return history.events?.find((e) => e.timerStartedEventAttributes)?.timerStartedEventAttributes;
        },
        { what: 'the first retry timer' },
      );
      expect(Number(timer?.startToFireTimeout?.seconds)).toBe(10);
      const description = await handle.describe();
      expect(await description.staticSummary()).toBe(
        `parcel.cancelled ${published.event.id} -> 1 endpoint (${accountId}, test)`,
      );
      expect(await description.staticDetails()).toContain('6 attempts, waits 10s, 1m, 10m, 1h, 6h');
      const attributes = Object.fromEntries(
        description.typedSearchAttributes.getAll().map((p) => [p.key.name, p.value]),
      );
      expect(attributes).toMatchObject({
        ParcelAccountId: accountId,
        ParcelLivemode: false,
        ParcelEventId: published.event.id,
        ParcelEventType: 'parcel.cancelled',
        ParcelEndpointIds: published.endpointIds,
      });
    } finally {
      await handle.terminate('test: ladder checked');
    }
  });
});
