import type { Client } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEarlyAttempts } from '../../../src/attempt';
import type { Config } from '../../../src/infra/config';
import { createHttpAgent } from '../../../src/infra/http-client';
import { publishEvent } from '../../../src/domain/events';
import { dispatchWaiting, firstAttemptId } from '../../../src/domain/outbox';
import { createPool, type Pool } from '../../../src/db/pool';
import type { DeliverEventInput, DeliverEventResult } from '../../../src/core/delivery-contract';
import { attemptsOf, createEndpoint, deliveryResult, parcel } from '../../helpers/delivery';
import { testConfig } from '../../helpers/env';
import { createAccount } from '../../helpers/fixtures';
import { historyText } from '../../helpers/history-text';
import { useDeliveryHarness } from '../../helpers/harness';
import { startTcpProxy, type TcpProxy } from '../../helpers/tcp-proxy';
import { waitFor } from '../../helpers/wait';
import { testDatabaseUrl } from '../../helpers/database';

/** A backoff timer the workflow starts when an attempt could not read the database (its summary says so). */
const isBackoffTimer = (e: Record<string, any>) =>
  Boolean(e.timerStartedEventAttributes) &&
  Buffer.from(e.userMetadata?.summary?.data ?? [])
    .toString()
    .includes('database unavailable');

/**
 * The worker reaches our Postgres through a proxy the test cuts; the test itself reaches it through a direct
 * pool. Called before the harness, whose worker's config (`db.config`) points at the proxy.
 */
function useDatabaseBehindProxy(env: Record<string, string>): { config: Config; proxy: TcpProxy; direct: Pool } {
  const db = {} as { config: Config; proxy: TcpProxy; direct: Pool };
  beforeAll(async () => {
    const url = new URL(testDatabaseUrl());
    db.proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port || 5432) });
    const proxied = new URL(url);
    proxied.port = String(db.proxy.port);
    db.config = testConfig({ DATABASE_URL: proxied.toString(), ...env });
    db.direct = createPool(testDatabaseUrl());
  });
  afterAll(async () => {
    await db.direct?.end();
    await db.proxy?.close();
  });
  return db;
}

/** Whether the event's workflow history holds an event that matches. */
async function historyHas(
  client: Client,
  eventId: string,
  match: (e: Record<string, any>) => boolean,
): Promise<boolean> {
  const history = await client.workflow.getHandle(`event:${eventId}`).fetchHistory();
  return (history.events ?? []).some((e) => match(e as Record<string, any>));
}

/**
 * Our own Postgres going away must neither count against an endpoint nor lose or duplicate an attempt. The worker
 * reaches Postgres through a proxy the test cuts.
 */
describe('delivery: our database down', () => {
  const db = useDatabaseBehindProxy({ DELIVERY_RETRY_DELAYS: '10ms', DELIVERY_TIMEOUT: '2s' });
  const h = useDeliveryHarness(() => db.config);

  /**
   * Published and handed to Temporal through the direct pool: the worker's own dispatcher, behind the cut proxy,
   * cannot, but another worker's could (the outbox needs some dispatcher to reach the database).
   */
  const publish = async (accountId: string) => {
    const published = await publishEvent(
      { pool: db.direct },
      { accountId, livemode: false, type: 'parcel.delivered', data: { parcel: parcel() } },
    );
    await waitFor(
      async () => {
        await dispatchWaiting(
          { pool: db.direct, temporal: h.tw.client, config: db.config, eagerStart: false },
          { ids: [published.event.id], limit: 1 },
        );
        const { rows } = await db.direct.query('SELECT dispatched_at FROM events WHERE id = $1', [published.event.id]);
        return rows[0].dispatched_at !== null;
      },
      { what: 'the hand-off to Temporal' },
    );
    return published;
  };

  it('waits, without posting or counting an attempt, while the endpoint cannot be read', async () => {
    const accountId = await createAccount(db.direct);
    const endpoint = await createEndpoint(db.direct, { accountId, url: `${h.receiver.url}/before` });
    await db.proxy.cut();
    try {
      const published = await publish(accountId);
      await waitFor(() => historyHas(h.tw.client, published.event.id, isBackoffTimer), {
        what: 'a database-unavailable backoff timer',
      });
      expect(h.receiver.at('/before')).toHaveLength(0);
      await db.proxy.restore();
      const result = await deliveryResult(h.tw.client, published.event.id);
      expect(result).toMatchObject({ endpoints: [{ outcome: 'delivered', attempts: 1 }] });
      expect(h.receiver.at('/before')).toHaveLength(1);
      expect((await attemptsOf(db.direct, endpoint.id)).map((a) => [a.attempt, a.succeeded])).toEqual([[1, true]]);
    } finally {
      await db.proxy.restore().catch(() => undefined);
    }
  });

  it('lets one ladder probe for all while the database is down: history grows per probe, not per endpoint', async () => {
    const accountId = await createAccount(db.direct);
    const endpoints = [];
    for (let i = 0; i < 5; i++)
      endpoints.push(await createEndpoint(db.direct, { accountId, url: `${h.receiver.url}/gate/${i}` }));
    await db.proxy.cut();
    try {
      const published = await publish(accountId);
      const events = async () =>
        ((await h.tw.client.workflow.getHandle(`event:${published.event.id}`).fetchHistory()).events ?? []) as Record<
          string,
          any
        >[];
      await waitFor(async () => (await events()).filter(isBackoffTimer).length >= 3, {
        what: 'three probes',
        timeoutMs: 30_000,
      });
      await db.proxy.restore();
      const result = (await deliveryResult(h.tw.client, published.event.id, 60_000)) as DeliverEventResult;
      expect(result.endpoints.map((e) => [e.outcome, e.attempts])).toEqual(
        Array.from({ length: 5 }, () => ['delivered', 1]),
      );
      // Backoff timers pending at the same time, over the whole history: one prober, never one per endpoint.
      let pending = 0;
      let mostPending = 0;
      const probeTimers = new Set<string>();
      for (const e of await events()) {
        if (isBackoffTimer(e)) {
          probeTimers.add(String(e.timerStartedEventAttributes.timerId));
          mostPending = Math.max(mostPending, ++pending);
        }
        if (e.timerFiredEventAttributes && probeTimers.has(String(e.timerFiredEventAttributes.timerId))) pending -= 1;
      }
      expect(mostPending).toBe(1);
      for (const endpoint of endpoints) {
        expect((await attemptsOf(db.direct, endpoint.id)).map((a) => [a.attempt, a.succeeded])).toEqual([[1, true]]);
      }
    } finally {
      await db.proxy.restore().catch(() => undefined);
    }
  }, 90_000);

  it('waits, without counting an attempt, while queries to the database hang (partition, failover)', async () => {
    const accountId = await createAccount(db.direct);
    const endpoint = await createEndpoint(db.direct, { accountId, url: `${h.receiver.url}/stalled` });
    // Open connections that stop answering: no error comes back, only the activity's own timeout would end it.
    db.proxy.stall();
    try {
      const published = await publish(accountId);
      await waitFor(() => historyHas(h.tw.client, published.event.id, isBackoffTimer), {
        what: 'a database-unavailable backoff timer',
        timeoutMs: 20_000,
      });
      // The backoff timer shows the attempt gave up on its own deadline, before its activity timeout.
      db.proxy.unstall();
      const result = await deliveryResult(h.tw.client, published.event.id, 60_000);
      expect(result).toMatchObject({ endpoints: [{ outcome: 'delivered', attempts: 1 }] });
      expect(
        await historyHas(h.tw.client, published.event.id, (e) => Boolean(e.activityTaskTimedOutEventAttributes)),
      ).toBe(false);
      // A local attempt's timeout would be its marker's failure.
      expect(
        await historyHas(h.tw.client, published.event.id, (e) =>
          Boolean(e.markerRecordedEventAttributes?.failure?.timeoutFailureInfo),
        ),
      ).toBe(false);
      expect(h.receiver.at('/stalled')).toHaveLength(1);
      expect((await attemptsOf(db.direct, endpoint.id)).map((a) => [a.attempt, a.succeeded, a.error])).toEqual([
        [1, true, null],
      ]);
    } finally {
      db.proxy.unstall();
    }
  }, 90_000);
});

/**
 * Our database gone between the POST and its record: the record ends as the receiver's answer, written once, and
 * the attempt id reaches the receiver once.
 */
describe('delivery: our database down between the POST and its record', () => {
  const db = useDatabaseBehindProxy({ DELIVERY_RETRY_DELAYS: '10ms', DELIVERY_TIMEOUT: '2s' });
  const h = useDeliveryHarness(() => db.config);

  /** Stored through the direct pool and handed to Temporal by `dispatch` (a dispatcher that reaches Postgres). */
  const publish = async (
    accountId: string,
    beforeStart?: (input: DeliverEventInput) => DeliverEventInput | Promise<DeliverEventInput>,
  ) => {
    const published = await publishEvent(
      { pool: db.direct },
      { accountId, livemode: false, type: 'parcel.delivered', data: { parcel: parcel() } },
    );
    // Handed off once its workflow exists: the harness worker's dispatcher may have started it first, and then
    // holds the row's lease (its mark may be cut off with the database).
    await waitFor(
      async () => {
        await dispatchWaiting(
          { pool: db.direct, temporal: h.tw.client, config: db.config, eagerStart: false, beforeStart },
          { ids: [published.event.id], limit: 1 },
        );
        return h.tw.client.workflow
          .getHandle(published.workflowId as string)
          .describe()
          .then(
            () => true,
            () => false,
          );
      },
      { what: 'the hand-off to Temporal' },
    );
    return published;
  };

  it("records the workflow's attempt posted just before the database went away, once, without posting again", async () => {
    const accountId = await createAccount(db.direct);
    const endpoint = await createEndpoint(db.direct, { accountId, url: `${h.receiver.url}/after` });
    // Attempt 1 fails (whichever dispatcher hands it off); the workflow's attempt 2 read the endpoint through the
    // proxy, which is cut while the request is in flight, and then the receiver answers.
    h.receiver.script('/after', (index) => {
      if (index === 0) return { status: 500 };
      void db.proxy.cut();
      return { status: 200, body: 'got it', delayMs: 100 };
    });
    try {
      const published = await publish(accountId);
      await waitFor(
        () =>
          historyHas(
            h.tw.client,
            published.event.id,
            (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'recordAttempt',
          ),
        { what: 'recordAttempt scheduled by the workflow' },
      );
      expect((await attemptsOf(db.direct, endpoint.id)).map((a) => a.attempt)).toEqual([1]);
      await db.proxy.restore();
      const result = await deliveryResult(h.tw.client, published.event.id);
      expect(result).toMatchObject({ endpoints: [{ outcome: 'delivered', attempts: 2 }] });
      expect(h.receiver.at('/after')).toHaveLength(2);
      const attempts = await attemptsOf(db.direct, endpoint.id);
      // The record the workflow writes went through history (the recordAttempt activity), so without the answer's
      // body: a receiver's answer may echo the event's personal values, which no history holds.
      expect(attempts.map((a) => [a.attempt, a.status_code, a.succeeded, a.response_body])).toEqual([
        [1, 500, false, expect.anything()],
        [2, 200, true, null],
      ]);
      expect(attempts[1]?.id).toBe(h.receiver.at('/after')[1]?.headers['service-delivery']);
      const history = await h.tw.client.workflow.getHandle(`event:${published.event.id}`).fetchHistory();
      const text = historyText(history);
      expect(text).toContain('responseBodyWithheld');
      expect(text).not.toContain('got it');
      expect(text).not.toContain(String(parcel().recipient_name));
    } finally {
      await db.proxy.restore().catch(() => undefined);
    }
  });

  it("the early try's record cut off: the outbox writes it once Postgres is back, and only then starts the workflow", async () => {
    // The early try is this test's dispatcher's, on a Postgres path of its own (a second proxy); the harness
    // worker's Postgres is away, so its own dispatcher cannot take the event first.
    const url = new URL(testDatabaseUrl());
    const earlyProxy = await startTcpProxy({ host: url.hostname, port: Number(url.port || 5432) });
    url.port = String(earlyProxy.port);
    const earlyPool = createPool(url.toString());
    earlyPool.on('error', () => undefined);
    const http = createHttpAgent(db.config);
    const earlyRuns = createEarlyAttempts({ config: db.config, pool: earlyPool, http }, { maxInFlight: 10 });
    try {
      const accountId = await createAccount(db.direct);
      const endpoint = await createEndpoint(db.direct, { accountId, url: `${h.receiver.url}/early-cut` });
      h.receiver.script('/early-cut', (index) => {
        if (index > 0) return { status: 200 };
        void earlyProxy.cut();
        return { status: 500, body: 'upstream down', delayMs: 100 };
      });
      await db.proxy.cut();
      const published = await publishEvent(
        { pool: db.direct },
        { accountId, livemode: false, type: 'parcel.delivered', data: { parcel: parcel() } },
      );
      const handing = dispatchWaiting(
        {
          pool: db.direct,
          temporal: h.tw.client,
          config: db.config,
          eagerStart: false,
          beforeStart: (input, attemptIds) => earlyRuns.handOff(input, attemptIds),
        },
        { ids: [published.event.id], limit: 1 },
      );
      await waitFor(() => h.receiver.at('/early-cut').length === 1, { what: 'the early POST' });
      // Posted, not yet on record: no workflow runs meanwhile, so nobody else can meet the attempt.
      expect(await attemptsOf(db.direct, endpoint.id)).toHaveLength(0);
      await expect(h.tw.client.workflow.getHandle(published.workflowId as string).describe()).rejects.toThrow(
        /not found/i,
      );
      await earlyProxy.restore();
      expect((await handing).dispatched).toEqual([published.event.id]);
      expect(
        (await attemptsOf(db.direct, endpoint.id)).map((a) => [a.attempt, a.status_code, a.response_body]),
      ).toEqual([[1, 500, 'upstream down']]);
      await db.proxy.restore();

      const result = await deliveryResult(h.tw.client, published.event.id);
      expect(result).toMatchObject({ endpoints: [{ outcome: 'delivered', attempts: 2 }] });
      const attempts = await attemptsOf(db.direct, endpoint.id);
      expect(attempts.map((a) => [a.attempt, a.status_code, a.response_body, a.error, a.succeeded])).toEqual([
        [1, 500, 'upstream down', null, false],
        [2, 200, 'ok', null, true],
      ]);
      const ids = h.receiver.at('/early-cut').map((r) => r.headers['service-delivery']);
      const { rows } = await db.direct.query<{ id: string }>('SELECT id FROM deliveries WHERE event_id = $1', [
        published.event.id,
      ]);
      expect(ids).toEqual([firstAttemptId(rows[0]!.id), attempts[1]!.id]);
      await earlyRuns.drain();
    } finally {
      await db.proxy.restore().catch(() => undefined);
      await earlyProxy.close();
      await earlyPool.end();
      await http.close();
    }
  }, 60_000);
});
