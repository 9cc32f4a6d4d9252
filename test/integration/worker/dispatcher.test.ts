import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { createPool, type Pool } from '../../../src/db/pool';
import { publishEvent } from '../../../src/domain/events';
import { operationalState } from '../../../src/domain/operational-state';
import { dispatchWaiting, nextDueInMs } from '../../../src/domain/outbox';
import { recoverEndpoint, resendEvent } from '../../../src/domain/redelivery';
import { attemptsOf, createEndpoint, deliveryResult, parcel } from '../../helpers/delivery';
import { testConfig } from '../../helpers/env';
import { createAccount } from '../../helpers/fixtures';
import { startReceiver, type Receiver } from '../../helpers/receiver';
import { startTestWorker, type TestWorker } from '../../helpers/temporal';
import { waitFor } from '../../helpers/wait';

/** A Temporal that refuses every start (or counts them): the outbox's failure paths, without an outage to stage. */
function fakeTemporal(start: (options: { workflowId: string }) => Promise<unknown>): Client {
  return {
    workflow: { start: (_type: string, options: { workflowId: string }) => start(options) },
    withDeadline: (_d: number, fn: () => Promise<unknown>) => fn(),
  } as unknown as Client;
}

/**
 * The events table and the deliveries merchants ask for are an outbox. Publishing, resending, recovering store; a
 * worker's dispatcher starts the workflow, whether it hears of the row at once (LISTEN) or finds it later
 * (sweep, or its wake-up for a recovery's next delivery due), and a start that failed is retried.
 */
describe('outbox dispatcher', () => {
  const config = testConfig({ DELIVERY_RETRY_DELAYS: '10ms' });
  let pool: Pool;
  let receiver: Receiver;
  let tw: TestWorker | undefined;
  let accountId: string;

  beforeAll(async () => {
    pool = createPool(config.databaseUrl);
    receiver = await startReceiver();
    accountId = await createAccount(pool);
  });
  afterAll(async () => {
    await tw?.stop();
    await receiver?.close();
    await pool?.end();
  });

  const dispatchedAt = async (id: string) =>
    (await pool.query('SELECT dispatched_at FROM events WHERE id = $1', [id])).rows[0].dispatched_at;
  const publish = (path: string) =>
    publishEvent(
      { pool },
      { accountId, livemode: false, type: 'parcel.delivered', data: { parcel: parcel({ id: path }) } },
    );

  it('keeps an event published while no worker runs, and delivers it once a worker starts', async () => {
    const endpoint = await createEndpoint(pool, { accountId, url: `${receiver.url}/before-worker` });
    const published = await publish('before-worker');
    expect(published.workflowId).toBe(`event:${published.event.id}`);
    expect(await dispatchedAt(published.event.id)).toBeNull();
    expect((await operationalState(pool)).outbox.pending).toBe(1);

    // No periodic sweep within the file: a hand-off after the first sweep can only come from a notification.
    tw = await startTestWorker(config, {}, { sweepIntervalMs: 600_000 });
    await tw.dispatcher.ready;
    await deliveryResult(tw.client, published.event.id);
    expect(receiver.at('/before-worker')).toHaveLength(1);
    expect(await attemptsOf(pool, endpoint.id)).toHaveLength(1);
    expect(await dispatchedAt(published.event.id)).toBeInstanceOf(Date);
    expect((await operationalState(pool)).outbox).toEqual({ pending: 0, oldestPendingAgeSeconds: 0 });
    expect(tw.dispatcher.stats().swept).toBe(1);
  });

  it('hears of an event as its publish commits, without waiting for a sweep', async () => {
    await createEndpoint(pool, { accountId, url: `${receiver.url}/notified` });
    const before = tw!.dispatcher.stats();
    const published = await publish('notified');
    await deliveryResult(tw!.client, published.event.id);
    expect(receiver.at('/notified')).toHaveLength(1);
    const after = tw!.dispatcher.stats();
    expect(after.notified).toBe(before.notified + 1);
    expect(after.swept).toBe(before.swept);
  });

  const scope = () => ({ accountId, livemode: false });
  const workflowDone = (workflowId: string) =>
    waitFor(async () => (await tw!.client.workflow.getHandle(workflowId).describe()).status.name === 'COMPLETED', {
      what: `${workflowId} to complete`,
    });

  it('hears of a resend as it is stored, and starts it as its own delivery workflow', async () => {
    const endpoint = await createEndpoint(pool, { accountId, url: `${receiver.url}/resend` });
    const published = await publish('resend');
    await deliveryResult(tw!.client, published.event.id);
    const before = tw!.dispatcher.stats();
    await resendEvent({ pool, config }, scope(), published.event.id, { endpointId: endpoint.id });
    const { rows } = await pool.query("SELECT id FROM deliveries WHERE event_id = $1 AND trigger = 'resend'", [
      published.event.id,
    ]);
    await workflowDone(`delivery:${rows[0].id}`);
    expect(receiver.at('/resend')).toHaveLength(2);
    expect(tw!.dispatcher.stats().notified).toBe(before.notified + 1);
    expect(
      (await pool.query('SELECT dispatched_at FROM deliveries WHERE id = $1', [rows[0].id])).rows[0].dispatched_at,
    ).toBeInstanceOf(Date);
  });

  it("starts a recovery's deliveries at its pace, each when it falls due, long before the next periodic sweep", async () => {
    const endpoint = await createEndpoint(pool, { accountId, url: `${receiver.url}/recover` });
    let up = false;
    receiver.script('/recover', () => ({ status: up ? 200 : 503 }));
    const since = Math.floor(Date.now() / 1000) - 1;
    const missed = [];
    for (let i = 0; i < 3; i++) missed.push((await publish('recover')).event.id);
    for (const id of missed) await deliveryResult(tw!.client, id);
    up = true;
    // RECOVER_RATE_PER_SECOND=4: one delivery every 250 ms. The dispatcher's sweep interval is 10 minutes here.
    const recovered = await recoverEndpoint(
      { pool, config: { ...config, delivery: { ...config.delivery, recoverRatePerSecond: 4 } } },
      scope(),
      endpoint.id,
      { since },
    );
    // Whatever becomes of this test (a timeout included), the next tests count every row a sweep hands off: none
    // of this recovery's may be left waiting for them.
    onTestFinished(async () => {
      await pool.query('UPDATE deliveries SET dispatched_at = now() WHERE recovery_id = $1 AND dispatched_at IS NULL', [
        recovered.id,
      ]);
    });
    expect(recovered.event_count).toBe(3);
    const { rows } = await pool.query<{ id: string; due_ms: number }>(
      `SELECT id, (EXTRACT(EPOCH FROM dispatch_after - min(dispatch_after) OVER ()) * 1000)::float8 AS due_ms
         FROM deliveries WHERE recovery_id = $1 ORDER BY dispatch_after`,
      [recovered.id],
    );
    expect(rows.map((row) => Math.round(row.due_ms))).toEqual([0, 250, 500]);
    for (const row of rows) await workflowDone(`delivery:${row.id}`);
    // None started before it was due.
    const early = await pool.query(
      'SELECT count(*)::int AS n FROM deliveries WHERE recovery_id = $1 AND dispatched_at < dispatch_after',
      [recovered.id],
    );
    expect(early.rows[0].n).toBe(0);
    const posted = receiver
      .at('/recover')
      .slice(-3)
      .map((r) => JSON.parse(r.rawBody.toString()).id);
    expect(posted).toEqual(missed);
  });

  it('does not dispatch an event with nobody to deliver to', async () => {
    const other = await createAccount(pool);
    const published = await publishEvent(
      { pool },
      { accountId: other, livemode: false, type: 'parcel.created', data: { parcel: parcel() } },
    );
    expect(published.workflowId).toBeNull();
    expect(await dispatchedAt(published.event.id)).toBeInstanceOf(Date);
  });

  it('leaves an event Temporal refused waiting, gives its lease back, and hands it off once Temporal answers', async () => {
    // The worker's dispatcher is stopped so the refused start is the only claimant.
    await tw!.stop();
    tw = undefined;
    await createEndpoint(pool, { accountId, url: `${receiver.url}/refused` });
    const published = await publish('refused');
    const refusing = fakeTemporal(() => Promise.reject(new Error('Temporal unreachable')));
    const refused = await dispatchWaiting(
      { pool, temporal: refusing, config, eagerStart: false },
      { limit: 10, leaseMs: 60_000 },
    );
    expect(refused).toMatchObject({ claimed: 1, dispatched: [] });
    expect(refused.error?.message).toBe('Temporal unreachable');
    const { rows } = await pool.query('SELECT dispatched_at, dispatch_lease_until FROM events WHERE id = $1', [
      published.event.id,
    ]);
    expect(rows[0]).toEqual({ dispatched_at: null, dispatch_lease_until: null });

    // A start under way holds its lease: while it does, nobody else claims the event.
    const starts: string[] = [];
    const counting = fakeTemporal(async (options) => starts.push(options.workflowId));
    await pool.query(`UPDATE events SET dispatch_lease_until = now() + interval '1 minute' WHERE id = $1`, [
      published.event.id,
    ]);
    expect(await dispatchWaiting({ pool, temporal: counting, config, eagerStart: false }, { limit: 10 })).toMatchObject(
      { claimed: 0 },
    );
    expect(starts).toEqual([]);

    // The lease lapses (moved back here instead of waited out); a worker's first sweep delivers it.
    await pool.query(`UPDATE events SET dispatch_lease_until = now() - interval '1 second' WHERE id = $1`, [
      published.event.id,
    ]);
    tw = await startTestWorker(config);
    await deliveryResult(tw.client, published.event.id);
    expect(receiver.at('/refused')).toHaveLength(1);
    expect(await dispatchedAt(published.event.id)).toBeInstanceOf(Date);
  });

  it('claims a delivery only once it is due, gives a refused one back, and starts it as delivery:<dly_id>', async () => {
    // No worker: this test is the only claimant.
    await tw?.stop();
    tw = undefined;
    const endpoint = await createEndpoint(pool, { accountId, url: `${receiver.url}/due` });
    const published = await publish('due');
    await pool.query('UPDATE events SET dispatched_at = now() WHERE id = $1', [published.event.id]);
    await resendEvent({ pool, config }, scope(), published.event.id, { endpointId: endpoint.id });
    const { rows } = await pool.query("SELECT id FROM deliveries WHERE event_id = $1 AND trigger = 'resend'", [
      published.event.id,
    ]);
    const id = rows[0].id as string;
    const starts: string[] = [];
    const counting = fakeTemporal(async (options) => starts.push(options.workflowId));

    await pool.query(`UPDATE deliveries SET dispatch_after = now() + interval '1 hour' WHERE id = $1`, [id]);
    expect(
      await dispatchWaiting({ pool, temporal: counting, config, eagerStart: false }, { ids: [id], limit: 10 }),
    ).toMatchObject({
      claimed: 0,
    });
    await pool.query('UPDATE deliveries SET dispatch_after = now() WHERE id = $1', [id]);
    // Due and not claimed, as one that falls due while a sweep is busy starting others: the dispatcher is told to
    // sweep again now, not at its periodic sweep.
    expect(await nextDueInMs({ pool })).toBeLessThanOrEqual(0);
    const refusing = fakeTemporal(() => Promise.reject(new Error('Temporal unreachable')));
    const refused = await dispatchWaiting(
      { pool, temporal: refusing, config, eagerStart: false },
      { ids: [id], limit: 10 },
    );
    expect(refused).toMatchObject({ claimed: 1, dispatched: [] });
    const waiting = await pool.query(
      'SELECT dispatched_at, dispatch_lease_until, status FROM deliveries WHERE id = $1',
      [id],
    );
    expect(waiting.rows[0]).toEqual({ dispatched_at: null, dispatch_lease_until: null, status: 'pending' });

    expect(await dispatchWaiting({ pool, temporal: counting, config, eagerStart: false }, { limit: 10 })).toMatchObject(
      {
        claimed: 1,
        dispatched: [id],
      },
    );
    expect(starts).toEqual([`delivery:${id}`]);
    expect(
      (await pool.query('SELECT dispatched_at FROM deliveries WHERE id = $1', [id])).rows[0].dispatched_at,
    ).toBeInstanceOf(Date);
    // The hand-off is done: nothing is claimed again.
    expect(await dispatchWaiting({ pool, temporal: counting, config, eagerStart: false }, { limit: 10 })).toMatchObject(
      { claimed: 0 },
    );
  });

  it("keeps a recovery's pace after its deliveries all fell due while nothing could start them", async () => {
    const endpoint = await createEndpoint(pool, { accountId, url: `${receiver.url}/backlog` });
    const since = Math.floor(Date.now() / 1000) - 1;
    const missed: string[] = [];
    for (let i = 0; i < 6; i++) missed.push((await publish('backlog')).event.id);
    // Delivered and failed long ago, as far as this test is concerned: no worker runs here.
    await pool.query('UPDATE events SET dispatched_at = now() WHERE id = ANY ($1)', [missed]);
    await pool.query(`UPDATE deliveries SET status = 'failed' WHERE event_id = ANY ($1)`, [missed]);
    const paced = { ...config, delivery: { ...config.delivery, recoverRatePerSecond: 2 } };
    const recovery = await recoverEndpoint({ pool, config: paced }, scope(), endpoint.id, { since });
    expect(recovery.event_count).toBe(6);
    // Due every 500 ms, the whole backlog an hour ago: Temporal was down, say, and nothing started.
    await pool.query(
      `UPDATE deliveries SET dispatch_after = dispatch_after - interval '1 hour' WHERE recovery_id = $1`,
      [recovery.id],
    );
    const starts: string[] = [];
    const counting = fakeTemporal(async (options) => starts.push(options.workflowId));

    // One second of the pace goes out (0, 500 and 1000 ms after the first), not the six.
    expect(
      await dispatchWaiting({ pool, temporal: counting, config, eagerStart: false }, { limit: 100 }),
    ).toMatchObject({ claimed: 3 });
    // The rest moved back behind the last one started, their spacing kept: nothing more is due yet.
    expect(
      await dispatchWaiting({ pool, temporal: counting, config, eagerStart: false }, { limit: 100 }),
    ).toMatchObject({ claimed: 0 });
    const { rows } = await pool.query<{ in_ms: number }>(
      `SELECT (EXTRACT(EPOCH FROM dispatch_after - now()) * 1000)::float8 AS in_ms
         FROM deliveries WHERE recovery_id = $1 AND dispatched_at IS NULL ORDER BY dispatch_after`,
      [recovery.id],
    );
    expect(rows).toHaveLength(3);
    expect(rows[0]!.in_ms).toBeGreaterThan(0);
    expect(rows[0]!.in_ms).toBeLessThanOrEqual(500);
    expect(rows.map((row) => Math.round(row.in_ms - rows[0]!.in_ms))).toEqual([0, 500, 1000]);
    expect(starts).toHaveLength(3);
    // Out of the way of the next test, which counts every row a sweep hands off.
    await pool.query('DELETE FROM deliveries WHERE recovery_id = $1 AND dispatched_at IS NULL', [recovery.id]);
  });

  it('never starts an event twice when dispatchers race for the same events', async () => {
    await tw?.stop();
    tw = undefined;
    await createEndpoint(pool, { accountId, url: `${receiver.url}/race` });
    const ids: string[] = [];
    for (let i = 0; i < 30; i++) ids.push((await publish(`race-${i}`)).event.id);
    // The real Temporal: a second start of an event would pass silently (the workflow exists), so what is counted
    // is what each dispatcher claimed and reports as handed off by itself.
    const connection = await Connection.connect({ address: config.temporal.address as string });
    try {
      const temporal = new Client({ connection, namespace: config.temporal.namespace });
      const racers = Array.from({ length: 4 }, () =>
        dispatchWaiting({ pool, temporal, config, eagerStart: false }, { limit: 10 }),
      );
      const raced = await Promise.all(racers);
      // Whatever the racers left (each takes at most 10), one more pass takes.
      const rest = await dispatchWaiting({ pool, temporal, config, eagerStart: false }, { limit: 100 });
      const handedOff = [...raced, rest].flatMap((r) => r.dispatched);
      expect(new Set(handedOff).size).toBe(handedOff.length);
      expect(handedOff.sort()).toEqual([...ids].sort());
      for (const id of ids) await temporal.workflow.getHandle(`event:${id}`).describe();
    } finally {
      await connection.close();
    }
    const { rows } = await pool.query(
      'SELECT count(*)::int AS n FROM events WHERE id = ANY ($1) AND dispatched_at IS NULL',
      [ids],
    );
    expect(rows[0].n).toBe(0);
    await waitFor(async () => (await operationalState(pool)).outbox.pending === 0, { what: 'an empty outbox' });
  });
});
