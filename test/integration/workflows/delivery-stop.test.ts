import { describe, expect, it } from 'vitest';
import { publishEvent } from '../../../domain/events';
import { attemptsOf, createEndpoint, deliveryResult, parcel } from '../../helpers/delivery';
import { testConfig } from '../../helpers/env';
import { createAccount } from '../../helpers/fixtures';
import { useDeliveryHarness } from '../../helpers/harness';
import { waitFor } from '../../helpers/wait';

describe('delivery: removal, suspension and the default ladder', () => {
  // Long enough a gap to remove the endpoint between attempts 1 and 2 without racing the timer.
  const config = testConfig({ DELIVERY_RETRY_DELAYS: '3s,3s' });
  const h = useDeliveryHarness(config);

  const publish = (accountId: string, cfg = config) =>
    publishEvent(
      { pool: h.tw.pool, temporal: h.tw.client, config: cfg },
      { accountId, livemode: false, type: 'parcel.cancelled', data: { parcel: parcel({ status: 'CANCELLED' }) } },
    );

  it('stops retrying an endpoint removed between attempts', async () => {
    const accountId = await createAccount(h.tw.pool);
    const endpoint = await createEndpoint(h.tw.pool, { accountId, url: `${h.receiver.url}/removed` });
    h.receiver.script('/removed', { status: 500 });
    const published = await publish(accountId);
    await waitFor(async () => (await attemptsOf(h.tw.pool, endpoint.id)).length === 1, { what: 'attempt 1' });
    await h.tw.pool.query('UPDATE webhook_endpoints SET deleted_at = now() WHERE id = $1', [endpoint.id]);

    const result = await deliveryResult(h.tw.client, published.event.id);
    expect(result).toMatchObject({ endpoints: [{ outcome: 'skipped', reason: 'endpoint_deleted', attempts: 1 }] });
    expect(h.receiver.at('/removed')).toHaveLength(1);
    expect(await attemptsOf(h.tw.pool, endpoint.id)).toHaveLength(1);
    // A removal is not a failure: no supervisor was told anything.
    await expect(h.tw.client.workflow.getHandle(`endpoint-supervisor:${endpoint.id}`).describe()).rejects.toThrow();
  });

  it('delivers nothing for a suspended account', async () => {
    const accountId = await createAccount(h.tw.pool, { status: 'suspended' });
    const endpoint = await createEndpoint(h.tw.pool, { accountId, url: `${h.receiver.url}/suspended` });
    const published = await publish(accountId);
    const result = await deliveryResult(h.tw.client, published.event.id);
    expect(result).toMatchObject({ endpoints: [{ outcome: 'skipped', reason: 'account_suspended', attempts: 0 }] });
    expect(h.receiver.at('/suspended')).toHaveLength(0);
    expect(await attemptsOf(h.tw.pool, endpoint.id)).toHaveLength(0);
  });

  it('publishes nothing to start when no endpoint is subscribed', async () => {
    const accountId = await createAccount(h.tw.pool);
    const published = await publish(accountId);
    expect(published.endpointIds).toEqual([]);
    expect(published.workflowId).toBeNull();
  });

  it('schedules the spec 8 ladder with the default configuration', async () => {
    const defaults = testConfig({ TEMPORAL_TASK_QUEUE: config.temporal.taskQueue });
    expect(defaults.delivery.retryDelaysMs).toEqual([10_000, 60_000, 600_000, 3_600_000, 21_600_000]);
    const accountId = await createAccount(h.tw.pool);
    await createEndpoint(h.tw.pool, { accountId, url: `${h.receiver.url}/ladder` });
    h.receiver.script('/ladder', { status: 500 });
    const published = await publish(accountId, defaults);
    const handle = h.tw.client.workflow.getHandle(`event:${published.event.id}`);
    try {
      const timer = await waitFor(async () => {
        const history = await handle.fetchHistory();
        return history.events?.find((e) => e.timerStartedEventAttributes)?.timerStartedEventAttributes;
      }, { what: 'the first retry timer' });
      expect(Number(timer?.startToFireTimeout?.seconds)).toBe(10);
      const description = await handle.describe();
      expect(await description.staticSummary()).toBe(`parcel.cancelled ${published.event.id} -> 1 endpoint (${accountId}, test)`);
      expect(await description.staticDetails()).toContain('6 attempts, waits 10s, 1m, 10m, 1h, 6h');
      const attributes = Object.fromEntries(description.typedSearchAttributes.getAll().map((p) => [p.key.name, p.value]));
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
