import { Client, Connection, WorkflowNotFoundError } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { localAttemptTaskTimeoutMs } from '../../../src/core/delivery-policy';
import type { CreatedApiKey } from '../../../src/domain/api-keys';
import { firstAttemptId } from '../../../src/domain/delivery-start';
import { publishEvent } from '../../../src/domain/events';
import type { Config } from '../../../src/infra/config';
import { apiFixture, bearer, type ApiFixture } from '../../helpers/api';
import { parcel } from '../../helpers/delivery';
import { testConfig } from '../../helpers/env';
import { startReceiver, type Receiver } from '../../helpers/receiver';
import { startTcpProxy, type TcpProxy } from '../../helpers/tcp-proxy';
import { startTestWorker, type TestWorker } from '../../helpers/temporal';
import { waitFor } from '../../helpers/wait';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

const DELIVERY_TIMEOUT_MS = 2_000;

/**
 * Resends, recoveries and test events are handed to Temporal as publishes are: the API stores the delivery and
 * answers 202, and a worker's dispatcher starts its `delivery:<dly_id>` workflow through the same builder as an
 * event's (src/domain/delivery-start.ts). The worker reaches the dev server through a proxy the test cuts; the test
 * itself reads Temporal directly.
 */
describe('merchant-asked deliveries: one hand-off to Temporal', () => {
  let proxy: TcpProxy;
  let config: Config;
  let tw: TestWorker;
  let receiver: Receiver;
  let api: ApiFixture;
  let connection: Connection;
  let client: Client;
  const log: string[] = [];

  beforeAll(async () => {
    const [host, port] = inject('temporalAddress').split(':');
    proxy = await startTcpProxy({ host: host!, port: Number(port) });
    config = testConfig({
      TEMPORAL_ADDRESS: `127.0.0.1:${proxy.port}`,
      DELIVERY_RETRY_DELAYS: '100ms',
      DELIVERY_TIMEOUT: `${DELIVERY_TIMEOUT_MS}ms`,
    });
    tw = await startTestWorker(config, {}, { log: (line) => log.push(line) });
    receiver = await startReceiver();
    api = await apiFixture({ config });
    connection = await Connection.connect({ address: inject('temporalAddress') });
    client = new Client({ connection, namespace: config.temporal.namespace });
  });
  afterAll(async () => {
    await proxy?.restore().catch(() => undefined);
    await api?.close();
    await tw?.stop();
    await receiver?.close();
    await connection?.close();
    await proxy?.close();
  });

  const call = (key: CreatedApiKey, url: string, payload: object) =>
    api.app.inject({ method: 'POST', url, headers: bearer(key.key), payload });

  async function merchantWithEndpoint(pathname: string): Promise<{ key: CreatedApiKey; endpointId: string }> {
    const key = await api.key({ status: 'active' });
    const res = await call(key, '/v1/webhooks', { url: `${receiver.url}${pathname}` });
    expect(res.statusCode, res.body).toBe(200);
    return { key, endpointId: res.json().id };
  }

  const publish = (accountId: string) =>
    publishEvent(
      { pool: api.pool },
      { accountId, livemode: false, type: 'parcel.delivered', data: { parcel: parcel() } },
    );

  /** The delivery of this trigger to the endpoint, as stored. */
  const deliveryOf = async (endpointId: string, trigger: string) =>
    (
      await api.pool.query<{ id: string; status: string; dispatched_at: Date | null }>(
        'SELECT id, status, dispatched_at FROM deliveries WHERE endpoint_id = $1 AND trigger = $2',
        [endpointId, trigger],
      )
    ).rows;

  /** Waits for the workflow to complete (read straight from the dev server) and returns its history. */
  async function completed(workflowId: string, timeoutMs = 30_000): Promise<HistoryEvent[]> {
    const handle = client.workflow.getHandle(workflowId);
    await waitFor(async () => (await handle.describe()).status.name === 'COMPLETED', {
      timeoutMs,
      what: `${workflowId} to complete`,
    });
    return (await handle.fetchHistory()).events ?? [];
  }

  function shape(events: HistoryEvent[]) {
    const started = events[0]?.workflowExecutionStartedEventAttributes;
    const timeout = started?.workflowTaskTimeout;
    return {
      activities: events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'signAndPost')
        .length,
      markers: events.filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity').length,
      taskTimeoutMs: Number(timeout?.seconds ?? 0) * 1000 + Math.round((timeout?.nanos ?? 0) / 1e6),
    };
  }

  it('starts a resend and a test event of one endpoint like its publish: attempt 1 before the start, one-ladder task timeout', async () => {
    const { key, endpointId } = await merchantWithEndpoint('/ho-local');
    const published = await publish(key.account_id);
    // Attempt 1 made by the dispatcher before the start, its outcome in the input: no activity, no marker.
    const oneLadder = { activities: 0, markers: 0, taskTimeoutMs: localAttemptTaskTimeoutMs(DELIVERY_TIMEOUT_MS) };
    expect(shape(await completed(`event:${published.event.id}`))).toEqual(oneLadder);

    const resent = await call(key, `/v1/events/${published.event.id}/resend`, { endpoint_id: endpointId });
    expect(resent.statusCode, resent.body).toBe(202);
    const [resend] = await deliveryOf(endpointId, 'resend');
    expect(shape(await completed(`delivery:${resend!.id}`))).toEqual(oneLadder);

    const sent = await call(key, `/v1/webhooks/${endpointId}/test`, {});
    expect(sent.statusCode, sent.body).toBe(202);
    const [test] = await deliveryOf(endpointId, 'test');
    expect(shape(await completed(`delivery:${test!.id}`))).toEqual(oneLadder);

    // Attempt 1 of each took the id fixed at hand-off from its delivery, which the early first attempt posts under.
    const ids = receiver.at('/ho-local').map((r) => r.headers['service-delivery']);
    expect(ids.slice(1)).toEqual([firstAttemptId(resend!.id), firstAttemptId(test!.id)]);
  });

  it('accepts a resend, a recovery and a test event while Temporal is unreachable, and delivers them once it is back', async () => {
    const up = await merchantWithEndpoint('/ho-up');
    const missed = await merchantWithEndpoint('/ho-missed');
    let reachable = false;
    receiver.script('/ho-missed', () => ({ status: reachable ? 200 : 503 }));
    const since = Math.floor(Date.now() / 1000) - 1;
    const upEvent = await publish(up.key.account_id);
    const missedEvent = await publish(missed.key.account_id);
    await completed(`event:${upEvent.event.id}`);
    await completed(`event:${missedEvent.event.id}`);
    reachable = true;

    await proxy.cut();
    const resent = await call(up.key, `/v1/events/${upEvent.event.id}/resend`, { endpoint_id: up.endpointId });
    expect(resent.statusCode, resent.body).toBe(202);
    expect(resent.json()).toEqual({
      object: 'resend',
      event_id: upEvent.event.id,
      endpoint_ids: [up.endpointId],
      livemode: false,
    });
    const sent = await call(up.key, `/v1/webhooks/${up.endpointId}/test`, { type: 'parcel.created' });
    expect(sent.statusCode, sent.body).toBe(202);
    expect(sent.json()).toMatchObject({ object: 'event', type: 'parcel.created', livemode: false });
    const recovered = await call(missed.key, `/v1/webhooks/${missed.endpointId}/recover`, { since });
    expect(recovered.statusCode, recovered.body).toBe(202);
    expect(recovered.json()).toMatchObject({
      object: 'recovery',
      endpoint_id: missed.endpointId,
      event_count: 1,
      id: expect.stringMatching(/^rcv_/),
    });

    // The dispatcher heard of them, made each one's attempt 1 before asking for its start (src/attempt/early.ts), and
    // Temporal refused the starts: each attempt 1 is on record, and none is handed off.
    await waitFor(() => log.some((line) => line.startsWith('outbox: starting workflows failed')), {
      timeoutMs: 30_000,
      what: 'a refused start',
    });
    const all = async () => [
      ...(await deliveryOf(up.endpointId, 'resend')),
      ...(await deliveryOf(up.endpointId, 'test')),
      ...(await deliveryOf(missed.endpointId, 'recover')),
    ];
    const waiting = await waitFor(
      async () => {
        const rows = await all();
        return rows.every((d) => d.status === 'succeeded') ? rows : undefined;
      },
      { timeoutMs: 30_000, what: 'attempt 1 of each on record' },
    );
    expect(waiting.map((d) => d.dispatched_at)).toEqual([null, null, null]);
    for (const d of waiting) {
      await expect(client.workflow.getHandle(`delivery:${d.id}`).describe()).rejects.toBeInstanceOf(
        WorkflowNotFoundError,
      );
    }

    await proxy.restore();
    for (const d of waiting) await completed(`delivery:${d.id}`, 90_000);
    await waitFor(() => log.includes('outbox: starting workflows again'), { what: 'the dispatcher to recover' });
    const done = await all();
    expect(done.map((d) => d.status)).toEqual(['succeeded', 'succeeded', 'succeeded']);
    expect(done.every((d) => d.dispatched_at instanceof Date)).toBe(true);
    // Each posted once: attempt 1 under the id fixed from its delivery.
    const posted = [...receiver.at('/ho-up'), ...receiver.at('/ho-missed')].map((r) => r.headers['service-delivery']);
    for (const d of waiting) expect(posted.filter((id) => id === firstAttemptId(d.id))).toHaveLength(1);
  }, 150_000);
});
