import { describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { sealSecret } from '../../../src/core/secrets';
import { publishEvent } from '../../../src/domain/events';
import { attemptsOf, createEndpoint, deliveryResult, parcel, startInput } from '../../helpers/delivery';
import { testConfig } from '../../helpers/env';
import { createAccount } from '../../helpers/fixtures';
import { useDeliveryHarness } from '../../helpers/harness';
import { waitFor } from '../../helpers/wait';

describe('delivery: removal and suspension', () => {
  // Long enough a gap to remove the endpoint between attempts 1 and 2 without racing the timer.
  const config = testConfig({ DELIVERY_RETRY_DELAYS: '3s,3s' });
  const h = useDeliveryHarness(config);

  const publish = (accountId: string) =>
    publishEvent(
      { pool: h.tw.pool },
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

  it('ends the ladder of an endpoint whose secret cannot be opened, skipped with its reason, and delivers the others', async () => {
    const accountId = await createAccount(h.tw.pool);
    const good = await createEndpoint(h.tw.pool, { accountId, url: `${h.receiver.url}/secret-ok` });
    const sealed = await createEndpoint(h.tw.pool, { accountId, url: `${h.receiver.url}/secret-sealed` });
    // Sealed under a key this worker does not have (WEBHOOK_SECRET_ENCRYPTION_KEYS changed, or was never set here).
    await h.tw.pool.query('UPDATE webhook_endpoints SET secret = $2 WHERE id = $1', [
      sealed.id,
      sealSecret('whsec_lost', sealed.id, [randomBytes(32)]),
    ]);
    const published = await publish(accountId);

    const result = await deliveryResult(h.tw.client, published.event.id);
    expect(result).toMatchObject({
      endpoints: expect.arrayContaining([
        { endpointId: good.id, outcome: 'delivered', attempts: 1 },
        { endpointId: sealed.id, outcome: 'skipped', reason: 'secret_unavailable', attempts: 0 },
      ]),
    });
    expect(h.receiver.at('/secret-ok')).toHaveLength(1);
    expect(h.receiver.at('/secret-sealed')).toHaveLength(0);
    const { rows } = await h.tw.pool.query(
      'SELECT endpoint_id, status, reason FROM deliveries WHERE event_id = $1 ORDER BY endpoint_id',
      [published.event.id],
    );
    expect(rows).toEqual(
      expect.arrayContaining([
        { endpoint_id: good.id, status: 'succeeded', reason: null },
        { endpoint_id: sealed.id, status: 'skipped', reason: 'secret_unavailable' },
      ]),
    );
    // One try, no retry loop: each endpoint's attempt 1, the skip included, was made by the dispatcher and rides
    // in the start's input, or (not decided within the start's short wait) is one activity; no database-outage timer.
    const history = await h.tw.client.workflow.getHandle(`event:${published.event.id}`).fetchHistory();
    const input = startInput(history.events ?? []);
    const inInput = Object.keys(input.firstAttemptOutcomes ?? {}).length;
    expect(
      inInput +
        (history.events?.filter((e) => e.activityTaskScheduledEventAttributes || e.markerRecordedEventAttributes)
          .length ?? 0),
    ).toBe(2);
    if (input.firstAttemptOutcomes?.[sealed.id])
      expect(input.firstAttemptOutcomes[sealed.id]).toEqual({ kind: 'skipped', reason: 'secret_unavailable' });
    expect(history.events?.some((e) => e.timerStartedEventAttributes)).toBe(false);
  });
});
