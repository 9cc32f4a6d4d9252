import { describe, expect, it } from 'vitest';
import { WORKFLOW_ID, type DeliverEventInput } from '../../../src/core/delivery-contract';
import type { Pool } from '../../../src/db/pool';
import { publishEvent } from '../../../src/domain/events';
import { createEndpoint, deliveryResult, parcel } from '../../helpers/delivery';
import { testConfig } from '../../helpers/env';
import { createAccount } from '../../helpers/fixtures';
import { useDeliveryHarness } from '../../helpers/harness';

/** The deliveries table: one row per ladder, kept up to date by the statement that records each attempt. */

async function deliveriesOf(pool: Pool, eventId: string) {
  const { rows } = await pool.query(
    `SELECT id, endpoint_id, trigger, status, reason, attempts, last_status_code, last_attempt_at IS NOT NULL AS attempted
       FROM deliveries WHERE event_id = $1 ORDER BY endpoint_id`,
    [eventId],
  );
  return rows;
}

describe('deliveries: made with the event, progressed by each attempt', () => {
  const config = testConfig({ DELIVERY_RETRY_DELAYS: '50ms,50ms' });
  const h = useDeliveryHarness(config);
  const publish = (accountId: string) =>
    publishEvent(
      { pool: h.tw.pool },
      { accountId, livemode: false, type: 'parcel.delivered', data: { parcel: parcel() } },
    );

  it('makes an automatic delivery per snapshot endpoint, then records success and abandonment on it', async () => {
    const accountId = await createAccount(h.tw.pool);
    const ok = await createEndpoint(h.tw.pool, { accountId, url: `${h.receiver.url}/d-ok` });
    const down = await createEndpoint(h.tw.pool, { accountId, url: `${h.receiver.url}/d-down` });
    h.receiver.script('/d-down', { status: 503 });
    const published = await publish(accountId);
    const made = await deliveriesOf(h.tw.pool, published.event.id);
    expect(made).toHaveLength(2);
    expect(made.every((d) => d.trigger === 'automatic' && /^dly_[0-9a-f]{32}$/.test(d.id))).toBe(true);

    await deliveryResult(h.tw.client, published.event.id);
    const byEndpoint = Object.fromEntries(
      (await deliveriesOf(h.tw.pool, published.event.id)).map((d) => [d.endpoint_id, d]),
    );
    expect(byEndpoint[ok.id]).toMatchObject({
      status: 'succeeded',
      reason: null,
      attempts: 1,
      last_status_code: 200,
      attempted: true,
    });
    expect(byEndpoint[down.id]).toMatchObject({
      status: 'failed',
      reason: 'attempts_exhausted',
      attempts: 3,
      last_status_code: 503,
    });
    const { rows } = await h.tw.pool.query(
      'SELECT DISTINCT delivery_id FROM delivery_attempts WHERE endpoint_id = $1',
      [down.id],
    );
    expect(rows).toEqual([{ delivery_id: byEndpoint[down.id].id }]);
  });

  it('ends the delivery skipped when the endpoint is removed before an attempt', async () => {
    const accountId = await createAccount(h.tw.pool);
    const endpoint = await createEndpoint(h.tw.pool, { accountId, url: `${h.receiver.url}/d-removed` });
    await h.tw.pool.query('UPDATE webhook_endpoints SET deleted_at = now() WHERE id = $1', [endpoint.id]);
    // Publishing would leave it out of the snapshot now: write the row publishing made before the removal.
    const published = await publishWithSnapshot(h.tw.pool, accountId, [endpoint.id]);
    await startDirect(published);
    await deliveryResult(h.tw.client, published.eventId);
    expect(await deliveriesOf(h.tw.pool, published.eventId)).toMatchObject([
      { status: 'skipped', reason: 'endpoint_deleted', attempts: 0 },
    ]);
    expect(h.receiver.at('/d-removed')).toHaveLength(0);
  });

  /** An event row, its automatic deliveries and the workflow input publishing would have made. */
  async function publishWithSnapshot(pool: Pool, accountId: string, endpointIds: string[]): Promise<DeliverEventInput> {
    const eventId = `evt_direct_${Date.now()}_${Math.floor(Math.random() * 1e6)}`;
    const body = JSON.stringify({
      id: eventId,
      object: 'event',
      type: 'parcel.delivered',
      created: 1,
      data: { parcel: parcel() },
    });
    await pool.query(
      // dispatched: the test starts its workflow itself, with this input
      `INSERT INTO events (id, account_id, livemode, type, created, body, endpoint_ids, dispatched_at) VALUES ($1, $2, false, 'parcel.delivered', 1, $3, $4, now())`,
      [eventId, accountId, body, endpointIds],
    );
    const deliveryIds: Record<string, string> = {};
    for (const endpointId of endpointIds) {
      const { rows } = await pool.query(
        `INSERT INTO deliveries (id, event_id, endpoint_id, account_id, livemode, trigger)
         VALUES ('dly_' || replace(gen_random_uuid()::text, '-', ''), $1, $2, $3, false, 'automatic') RETURNING id`,
        [eventId, endpointId, accountId],
      );
      deliveryIds[endpointId] = rows[0].id;
    }
    return {
      eventId,
      eventType: 'parcel.delivered',
      accountId,
      livemode: false,
      endpointIds,
      deliveryIds,
      retryDelaysMs: config.delivery.retryDelaysMs,
      timeoutMs: config.delivery.timeoutMs,
      failingThreshold: config.delivery.failingThreshold,
    };
  }

  async function startDirect(input: DeliverEventInput): Promise<void> {
    await h.tw.client.workflow.start('deliverEvent', {
      workflowId: WORKFLOW_ID.deliverEvent(input.eventId),
      taskQueue: config.temporal.taskQueue,
      args: [input],
    });
  }
});
