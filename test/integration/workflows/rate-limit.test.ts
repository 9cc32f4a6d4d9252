import path from 'node:path';
import { afterAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { publishEvent } from '../../../src/domain/events';
import { attemptsOf, createEndpoint, deliveryResult, parcel } from '../../helpers/delivery';
import { FIXTURES, testConfig } from '../../helpers/env';
import { createAccount } from '../../helpers/fixtures';
import { useDeliveryHarness } from '../../helpers/harness';
import { testDatabaseUrl } from '../../helpers/database';
import { waitFor } from '../../helpers/wait';
import { startWorkerProcess, type WorkerProcess } from '../../helpers/worker-process';

/**
 * Receivers protected: an endpoint's rate limit holds across worker processes, and a 429 or 503 with
 * Retry-After keeps every delivery to that endpoint away until the time it names.
 */
describe('delivery: rate limits and Retry-After', () => {
  const config = testConfig({ DELIVERY_RETRY_DELAYS: '100ms,100ms', DELIVERY_TIMEOUT: '2s' });
  const h = useDeliveryHarness(config);
  let accountId: string;
  const workers: WorkerProcess[] = [];

  beforeEach(async () => {
    accountId = await createAccount(h.tw.pool);
  });
  afterAll(async () => {
    for (const worker of workers.splice(0)) await worker.stop();
  });

  const publish = async () =>
    (
      await publishEvent(
        { pool: h.tw.pool },
        { accountId, livemode: false, type: 'parcel.delivered', data: { parcel: parcel() } },
      )
    ).event.id;

  it('two workers on one task queue together stay within the limit, and every delivery succeeds at its first attempt', async () => {
    workers.push(
      await startWorkerProcess({
        DATABASE_URL: testDatabaseUrl(),
        TEMPORAL_ADDRESS: inject('temporalAddress'),
        TEMPORAL_TASK_QUEUE: config.temporal.taskQueue,
        WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
        WEBHOOK_CA_FILE: path.join(FIXTURES, 'tls', 'ca.pem'),
        DELIVERY_RETRY_DELAYS: '100ms,100ms',
        DELIVERY_TIMEOUT: '2s',
      }),
    );
    const limit = 2;
    const events = 12;
    const endpoint = await createEndpoint(h.tw.pool, { accountId, url: `${h.receiver.url}/limited` });
    await h.tw.pool.query('UPDATE webhook_endpoints SET rate_limit = $2 WHERE id = $1', [endpoint.id, limit]);
    const eventIds: string[] = [];
    for (let i = 0; i < events; i++) eventIds.push(await publish());

    await waitFor(async () => h.receiver.at('/limited').length >= events || undefined, {
      timeoutMs: 60_000,
      what: `${events} deliveries to the limited endpoint`,
    });
    for (const eventId of eventIds) {
      expect(await deliveryResult(h.tw.client, eventId)).toMatchObject({
        endpoints: [{ outcome: 'delivered', attempts: 1 }],
      });
    }
    expect(h.receiver.at('/limited')).toHaveLength(events);
    // The limit is judged per second of Postgres's clock, when a token is handed out, not by when a post reaches
    // the receiver: this receiver shares its event loop with the in-process worker, so a stall of that loop
    // stamps the posts of two seconds in one. Every post took a token (a token handed out too late in its second
    // posts nothing but stays counted), no second handed out more than the limit, so the drain was held back
    // over at least events / limit seconds.
    const { rows: seconds } = await h.tw.pool.query<{ granted: number }>(
      'SELECT granted FROM endpoint_rate_tokens WHERE endpoint_id = $1 AND granted > 0',
      [endpoint.id],
    );
    expect(seconds.reduce((sum, row) => sum + row.granted, 0)).toBeGreaterThanOrEqual(events);
    expect(Math.max(...seconds.map((row) => row.granted))).toBeLessThanOrEqual(limit);
    expect(seconds.length).toBeGreaterThanOrEqual(events / limit);
    const attempts = await attemptsOf(h.tw.pool, endpoint.id);
    expect(attempts.map((a) => [a.attempt, a.succeeded])).toEqual(eventIds.map(() => [1, true]));
  });

  it('an attempt 1 held back by the limit waits in the outbox for its place, then starts with its post on record', async () => {
    const endpoint = await createEndpoint(h.tw.pool, { accountId, url: `${h.receiver.url}/delayed` });
    await h.tw.pool.query('UPDATE webhook_endpoints SET rate_limit = 1 WHERE id = $1', [endpoint.id]);
    const eventIds = [await publish(), await publish(), await publish()];
    for (const eventId of eventIds) {
      expect(await deliveryResult(h.tw.client, eventId)).toMatchObject({
        endpoints: [{ outcome: 'delivered', attempts: 1 }],
      });
    }
    const arrivals = h.receiver.at('/delayed').map((r) => r.receivedAt);
    expect(new Set(arrivals.map((at) => Math.floor(at / 1000))).size).toBe(3);

    // At one per second, the third event's attempt 1 had a place at least a second ahead: its row waited for it.
    const { rows } = await h.tw.pool.query<{ place: string | null }>(
      'SELECT first_attempt_place AS place FROM events WHERE id = $1',
      [eventIds[2]],
    );
    expect(rows[0]!.place).not.toBeNull();
    // The workflow was started once attempt 1 was on record, its outcome in the input: no delay, no timer, no
    // local attempt, one workflow task (started, task scheduled, started, completed, workflow completed).
    const handle = h.tw.client.workflow.getHandle(`event:${eventIds[2]}`);
    const history = await handle.fetchHistory();
    const started = history.events?.[0]?.workflowExecutionStartedEventAttributes;
    expect(
      Number(started?.firstWorkflowTaskBackoff?.seconds ?? 0) + (started?.firstWorkflowTaskBackoff?.nanos ?? 0),
    ).toBe(0);
    expect(history.events).toHaveLength(5);
    expect(
      (history.events ?? []).filter((e) => e.timerStartedEventAttributes || e.markerRecordedEventAttributes),
    ).toEqual([]);
    const startedAtMs = Number(history.events?.[0]?.eventTime?.seconds ?? 0) * 1000;
    const posted = h.receiver
      .at('/delayed')
      .find((r) => (JSON.parse(r.rawBody.toString()) as { id: string }).id === eventIds[2])!;
    expect(startedAtMs).toBeGreaterThanOrEqual(Math.floor(posted.receivedAt / 1000) * 1000);
    expect((await attemptsOf(h.tw.pool, endpoint.id, eventIds[2])).map((a) => [a.attempt, a.succeeded])).toEqual([
      [1, true],
    ]);
  });

  it('Retry-After in seconds on a 429: neither the delivery nor another to the endpoint is posted before it', async () => {
    let answeredAt = 0;
    h.receiver.script('/seconds', (index) => {
      if (index > 0) return {};
      answeredAt = Date.now();
      return { status: 429, headers: { 'retry-after': '3' }, body: 'slow down' };
    });
    const endpoint = await createEndpoint(h.tw.pool, { accountId, url: `${h.receiver.url}/seconds` });
    const first = await publish();
    await waitFor(async () => (await attemptsOf(h.tw.pool, endpoint.id)).length > 0 || undefined, {
      timeoutMs: 20_000,
      what: 'the 429 recorded',
    });
    const second = await publish();

    expect(await deliveryResult(h.tw.client, first)).toMatchObject({
      endpoints: [{ outcome: 'delivered', attempts: 2 }],
    });
    expect(await deliveryResult(h.tw.client, second)).toMatchObject({
      endpoints: [{ outcome: 'delivered', attempts: 1 }],
    });
    const later = h.receiver.at('/seconds').slice(1);
    expect(later).toHaveLength(2);
    for (const request of later) expect(request.receivedAt).toBeGreaterThanOrEqual(answeredAt + 3_000);
    const attempts = await attemptsOf(h.tw.pool, endpoint.id, first);
    expect(attempts.map((a) => [a.attempt, a.status_code, a.response_body, a.succeeded])).toEqual([
      [1, 429, 'slow down', false],
      [2, 200, 'ok', true],
    ]);
  });

  it('Retry-After as an HTTP date on a 503: the next attempt waits until that date', async () => {
    let notBefore = 0;
    h.receiver.script('/date', (index) => {
      if (index > 0) return {};
      // HTTP dates name whole seconds: the next whole second at least 2 s ahead.
      notBefore = (Math.floor(Date.now() / 1000) + 3) * 1000;
      return { status: 503, headers: { 'retry-after': new Date(notBefore).toUTCString() }, body: 'maintenance' };
    });
    const endpoint = await createEndpoint(h.tw.pool, { accountId, url: `${h.receiver.url}/date` });
    const eventId = await publish();

    expect(await deliveryResult(h.tw.client, eventId)).toMatchObject({
      endpoints: [{ outcome: 'delivered', attempts: 2 }],
    });
    const requests = h.receiver.at('/date');
    expect(requests).toHaveLength(2);
    expect(requests[1]!.receivedAt).toBeGreaterThanOrEqual(notBefore);
    const attempts = await attemptsOf(h.tw.pool, endpoint.id);
    expect(attempts.map((a) => [a.attempt, a.status_code, a.response_body])).toEqual([
      [1, 503, 'maintenance'],
      [2, 200, 'ok'],
    ]);
  });

  it('a 429 without Retry-After keeps the ladder as it is', async () => {
    h.receiver.script('/plain', (index) => (index === 0 ? { status: 429, body: 'busy' } : {}));
    await createEndpoint(h.tw.pool, { accountId, url: `${h.receiver.url}/plain` });
    const eventId = await publish();
    expect(await deliveryResult(h.tw.client, eventId)).toMatchObject({
      endpoints: [{ outcome: 'delivered', attempts: 2 }],
    });
    const [first, second] = h.receiver.at('/plain');
    expect(second!.receivedAt - first!.receivedAt).toBeLessThan(1_500);
  });
});
