import { temporal } from '@temporalio/proto';
import { describe, expect, it } from 'vitest';
import { publishEvent } from '../../../src/domain/events';
import { SEARCH_ATTRIBUTES } from '../../../src/core/delivery-contract';
import { attemptsOf, createEndpoint, deliveryResult, parcel } from '../../helpers/delivery';
import { testConfig } from '../../helpers/env';
import { createAccount } from '../../helpers/fixtures';
import { useDeliveryHarness } from '../../helpers/harness';

const { HistoryEvent } = temporal.api.history.v1;

/**
 * Wide fan-out and large bodies: what Temporal's limits (4 MB per gRPC message, 2 MB per payload, 50 MB of
 * history) would break if the body travelled with every attempt.
 */
describe('delivery: wide fan-out with a large body', () => {
  const config = testConfig({ DELIVERY_RETRY_DELAYS: '50ms,50ms,50ms,50ms,50ms', DELIVERY_TIMEOUT: '8s' });
  const h = useDeliveryHarness(config);

  it('delivers a 100 KB event to 50 endpoints, each retry with the stored bytes, and keeps the body out of history', async () => {
    const accountId = await createAccount(h.tw.pool);
    const endpoints = [];
    for (let i = 0; i < 50; i++)
      endpoints.push(await createEndpoint(h.tw.pool, { accountId, url: `${h.receiver.url}/wide/${i}` }));
    // The first attempt fails everywhere, so every endpoint is posted to twice.
    for (let i = 0; i < 50; i++)
      h.receiver.script(`/wide/${i}`, (index) => (index === 0 ? { status: 503 } : { status: 200 }));
    const description = 'x'.repeat(100 * 1024);
    const published = await publishEvent(
      { pool: h.tw.pool },
      { accountId, livemode: false, type: 'parcel.delivered', data: { parcel: parcel({ description }) } },
    );
    expect(published.endpointIds).toHaveLength(50);

    const result = (await deliveryResult(h.tw.client, published.event.id, 45_000)) as {
      endpoints: { outcome: string }[];
    };
    expect(result.endpoints.map((e) => e.outcome)).toEqual(Array(50).fill('delivered'));

    const { rows } = await h.tw.pool.query<{ body: string }>('SELECT body FROM events WHERE id = $1', [
      published.event.id,
    ]);
    for (let i = 0; i < 50; i++) {
      const requests = h.receiver.at(`/wide/${i}`);
      expect(requests).toHaveLength(2);
      for (const request of requests) expect(request.rawBody.toString()).toBe(rows[0]?.body);
      expect((await attemptsOf(h.tw.pool, endpoints[i]!.id)).map((a) => a.succeeded)).toEqual([false, true]);
    }

    // 100 attempts of a 100 KB body would be 10 MB of history; without the body it is a few hundred KB.
    const history = await h.tw.client.workflow.getHandle(published.workflowId as string).fetchHistory();
    const sizes = (history.events ?? []).map((event) => HistoryEvent.encode(event).finish().length);
    // Attempt 1 of each endpoint was made by the dispatcher before the start; the retries are scheduled activities.
    const attemptEvents = (history.events ?? []).filter(
      (event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'signAndPost',
    );
    expect(attemptEvents.length).toBeGreaterThanOrEqual(50);
    for (const event of attemptEvents) expect(HistoryEvent.encode(event).finish().length).toBeLessThan(4 * 1024);
    expect(sizes.reduce((a, b) => a + b, 0)).toBeLessThan(1024 * 1024);
  });

  it("starts delivery to 200 endpoints: the endpoint search attribute keeps what fits in Temporal's 2 KB", async () => {
    const accountId = await createAccount(h.tw.pool);
    for (let i = 0; i < 200; i++) await createEndpoint(h.tw.pool, { accountId, url: `${h.receiver.url}/many/${i}` });
    const published = await publishEvent(
      { pool: h.tw.pool },
      { accountId, livemode: false, type: 'parcel.delivered', data: { parcel: parcel() } },
    );
    expect(published.endpointIds).toHaveLength(200);
    const result = (await deliveryResult(h.tw.client, published.event.id, 45_000)) as {
      endpoints: { outcome: string }[];
    };
    expect(result.endpoints.map((e) => e.outcome)).toEqual(Array(200).fill('delivered'));

    const described = await h.tw.client.workflow.getHandle(published.workflowId as string).describe();
    const searchable = described.typedSearchAttributes.get(SEARCH_ATTRIBUTES.endpointIds) ?? [];
    expect(searchable.length).toBeGreaterThan(50);
    expect(searchable).toEqual(published.endpointIds.slice(0, searchable.length));
    expect(JSON.stringify(searchable).length).toBeLessThanOrEqual(2048);
  });
});
