import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSignAndPost } from '../../../src/activities/sign-and-post';
import { createEarlyAttempts, EARLY_ATTEMPT_RUN_PREFIX, recordAttempt, type AttemptDeps } from '../../../src/attempt';
import {
  attemptRecord,
  FAILURE,
  type AttemptOutcome,
  type DeliverEventInput,
  type SignAndPostInput,
} from '../../../src/core/delivery-contract';
import { createPool, type Pool } from '../../../src/db/pool';
import { publishEvent } from '../../../src/domain/events';
import { firstAttemptId } from '../../../src/domain/outbox';
import { newId } from '../../../src/core/ids';
import { createHttpAgent } from '../../../src/infra/http-client';
import { inActivityContext } from '../../helpers/activity-context';
import { attemptsOf, createEndpoint, deliveryResult, parcel, startInput } from '../../helpers/delivery';
import { testDatabaseUrl } from '../../helpers/database';
import { FIXTURES, testConfig } from '../../helpers/env';
import { createAccount } from '../../helpers/fixtures';
import { useDeliveryHarness } from '../../helpers/harness';
import { startTcpProxy, type TcpProxy } from '../../helpers/tcp-proxy';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/** The outcome a local attempt's marker holds, as the Temporal UI shows it. */
function markerOutcomes(events: HistoryEvent[]): AttemptOutcome[] {
  return events
    .filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity')
    .map((e) => {
      const payload = e.markerRecordedEventAttributes?.details?.['result']?.payloads?.[0]?.data;
      return JSON.parse(Buffer.from(payload ?? []).toString()) as AttemptOutcome;
    });
}

/**
 * Early first attempts (src/attempt/early.ts): the outbox dispatcher posts attempt 1 of a one-endpoint delivery under
 * the id fixed at hand-off, and starts the workflow once it is on record, its outcome in the input. One POST per
 * attempt id whoever meets it first, and the history shows the attempt.
 */
describe('early first attempts', () => {
  const config = testConfig({ DELIVERY_RETRY_DELAYS: '50ms', DELIVERY_TIMEOUT: '2s' });
  const h = useDeliveryHarness(config);

  async function publishTo(pathname: string) {
    const accountId = await createAccount(h.tw.pool);
    const endpoint = await createEndpoint(h.tw.pool, { accountId, url: `${h.receiver.url}${pathname}` });
    const published = await publishEvent(
      { pool: h.tw.pool },
      { accountId, livemode: false, type: 'parcel.created', data: { parcel: parcel() } },
    );
    const { rows } = await h.tw.pool.query<{ id: string }>('SELECT id FROM deliveries WHERE event_id = $1', [
      published.event.id,
    ]);
    return {
      endpoint,
      eventId: published.event.id,
      workflowId: published.workflowId as string,
      deliveryId: rows[0]!.id,
    };
  }

  it('the dispatcher posts attempt 1 under the id fixed at hand-off; the workflow takes it from its input and posts nothing', async () => {
    const { endpoint, eventId, workflowId, deliveryId } = await publishTo('/early-ok');
    expect(await deliveryResult(h.tw.client, eventId)).toMatchObject({
      endpoints: [{ outcome: 'delivered', attempts: 1 }],
    });

    const arrivals = h.receiver.at('/early-ok');
    expect(arrivals.map((r) => r.headers['service-delivery'])).toEqual([firstAttemptId(deliveryId)]);
    const attempts = await attemptsOf(h.tw.pool, endpoint.id);
    expect(attempts.map((a) => [a.id, a.attempt, a.status_code, a.succeeded])).toEqual([
      [firstAttemptId(deliveryId), 1, 200, true],
    ]);
    const claim = await h.tw.pool.query<{ run: string }>('SELECT run FROM attempt_claims WHERE attempt_id = $1', [
      firstAttemptId(deliveryId),
    ]);
    expect(claim.rows[0]?.run.startsWith(EARLY_ATTEMPT_RUN_PREFIX)).toBe(true);

    const history = await h.tw.client.workflow.getHandle(workflowId).fetchHistory();
    const events = history.events ?? [];
    const made = expect.objectContaining({
      kind: 'attempted',
      statusCode: 200,
      succeeded: true,
      recorded: true,
      early: true,
    });
    // The operator's view: the start's input holds attempt 1's outcome, and the first task ends the workflow
    // without a local activity (started, task scheduled, started, completed, workflow completed).
    const input = startInput(events);
    expect(input.firstAttemptOutcomes).toEqual({ [endpoint.id]: made });
    expect(markerOutcomes(events)).toEqual([]);
    expect(events).toHaveLength(5);
    if (process.env.UPDATE_HISTORIES === '1') {
      writeFileSync(
        path.join(FIXTURES, 'histories', 'success-first-attempt-before-start.binpb'),
        temporal.api.history.v1.History.encode(history).finish(),
      );
    }
  });

  it('a failed early attempt is attempt 1 failed: the ladder goes on with attempt 2 from the workflow', async () => {
    h.receiver.script('/early-retry', (index) => (index === 0 ? { status: 500 } : { status: 200 }));
    const { endpoint, eventId, deliveryId } = await publishTo('/early-retry');
    expect(await deliveryResult(h.tw.client, eventId)).toMatchObject({
      endpoints: [{ outcome: 'delivered', attempts: 2 }],
    });
    const ids = h.receiver.at('/early-retry').map((r) => r.headers['service-delivery'] as string);
    expect(ids).toHaveLength(2);
    expect(ids[0]).toBe(firstAttemptId(deliveryId));
    const attempts = await attemptsOf(h.tw.pool, endpoint.id);
    expect(attempts.map((a) => [a.id, a.attempt, a.status_code])).toEqual([
      [ids[0], 1, 500],
      [ids[1], 2, 200],
    ]);
  });
});

/**
 * The same delivery handed off again (a start retried, a lease lapsed, another dispatcher), and workflows started
 * before the outbox owned attempt 1. The early tries and the workflow's tries are called directly against the real
 * database and a real HTTPS receiver.
 */
describe('early first attempts met from another process', () => {
  const config = testConfig({ DELIVERY_TIMEOUT: '300ms' });
  const h = useDeliveryHarness(config);
  let deps: AttemptDeps;
  let proxy: TcpProxy;
  let proxied: Pool;
  beforeAll(async () => {
    deps = { config, pool: h.tw.pool, http: createHttpAgent(config) };
    const url = new URL(testDatabaseUrl());
    proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port || 5432) });
    url.port = String(proxy.port);
    proxied = createPool(url.toString());
    // A connection dropped by the cut must not take the test process with it.
    proxied.on('error', () => undefined);
  });
  afterAll(async () => {
    await deps?.http.close();
    await proxied?.end();
    await proxy?.close();
  });

  /**
   * An attempt of a stored event to an endpoint made after it, with a delivery row of its own: the event's own
   * fan-out is empty, so no dispatcher (this file's or another's, on the same database) delivers it; only the
   * calls below post.
   */
  async function anAttempt(pathname: string): Promise<SignAndPostInput> {
    const accountId = await createAccount(h.tw.pool);
    const published = await publishEvent(
      { pool: h.tw.pool },
      { accountId, livemode: false, type: 'parcel.created', data: { parcel: parcel() } },
    );
    const endpoint = await createEndpoint(h.tw.pool, { accountId, url: `${h.receiver.url}${pathname}` });
    const { rows } = await h.tw.pool.query<{ id: string }>(
      `INSERT INTO deliveries (id, event_id, endpoint_id, account_id, livemode, trigger)
       VALUES ('dly_' || replace(gen_random_uuid()::text, '-', ''), $1, $2, $3, false, 'automatic') RETURNING id`,
      [published.event.id, endpoint.id, accountId],
    );
    return {
      attemptId: newId('attempt'),
      endpointId: endpoint.id,
      eventId: published.event.id,
      eventType: 'parcel.created',
      accountId,
      livemode: false,
      attempt: 1,
      deliveryId: rows[0]!.id,
      finalAttempt: false,
      timeoutMs: 300,
    };
  }

  /** The workflow input whose attempt 1 is `input`, as the dispatcher hands it to the early tries. */
  const deliverInput = (input: SignAndPostInput): DeliverEventInput => ({
    eventId: input.eventId,
    eventType: input.eventType,
    accountId: input.accountId,
    livemode: input.livemode,
    endpointIds: [input.endpointId],
    deliveryIds: { [input.endpointId]: input.deliveryId },
    retryDelaysMs: [10],
    timeoutMs: input.timeoutMs,
    failingThreshold: 3,
  });

  /** One hand-off of the delivery whose attempt 1 is `input`, as a dispatcher makes it: the input it starts with. */
  async function handOff(input: SignAndPostInput, withDeps = deps): Promise<DeliverEventInput> {
    const early = createEarlyAttempts(withDeps, { maxInFlight: 10 });
    try {
      return await early.handOff(deliverInput(input), { [input.endpointId]: input.attemptId });
    } finally {
      await early.drain();
    }
  }

  const workflowTry = (
    input: SignAndPostInput,
    withDeps: Parameters<typeof createSignAndPost>[0] = deps,
    claimTry = 0,
  ) => inActivityContext({}, () => createSignAndPost(withDeps)({ ...input, claimTry, notPostedRuns: [] }));

  const recordOf = async (attemptId: string) =>
    (
      await h.tw.pool.query(
        'SELECT status_code, response_body, error, succeeded FROM delivery_attempts WHERE id = $1',
        [attemptId],
      )
    ).rows;

  it('a delivery handed off again finds its attempt 1 on record: that outcome, no second POST', async () => {
    const input = await anAttempt('/again-recorded');
    const first = await handOff(input);
    expect(first.firstAttemptOutcomes?.[input.endpointId]).toMatchObject({
      kind: 'attempted',
      statusCode: 200,
      recorded: true,
      early: true,
    });
    // Another dispatcher (this one's lease lapsed before its start went out): it settles the attempt from its record.
    const again = await handOff(input);
    const { statusCode, error, durationMs, succeeded } = first.firstAttemptOutcomes![input.endpointId] as {
      [k: string]: unknown;
    };
    expect(again.firstAttemptOutcomes?.[input.endpointId]).toMatchObject({ statusCode, error, durationMs, succeeded });
    expect(h.receiver.at('/again-recorded')).toHaveLength(1);
  });

  it('handed off again with no room for an early try: an attempt 1 claimed earlier is named in the start, and the workflow takes its record', async () => {
    const input = await anAttempt('/again-no-room');
    const fresh = await anAttempt('/no-room-fresh');
    await handOff(input);
    // A dispatcher whose early tries are all taken leaves attempts 1 to the workflow.
    const full = createEarlyAttempts(deps, { maxInFlight: 0 });
    const ids = { [input.endpointId]: input.attemptId };
    const again = await full.handOff(deliverInput(input), ids);
    expect(again.firstAttemptOutcomes).toBeUndefined();
    expect((await full.leaveToWorkflow(again, ids))?.firstAttemptIds).toEqual(ids);
    // Nobody claimed the other one: its workflow draws attempt 1's id as usual.
    const freshIds = { [fresh.endpointId]: fresh.attemptId };
    const other = await full.handOff(deliverInput(fresh), freshIds);
    expect(await full.leaveToWorkflow(other, freshIds)).toEqual(other);
    // The workflow's try under the named id meets the earlier claim and takes its record.
    expect(await workflowTry(input)).toMatchObject({ kind: 'attempted', statusCode: 200, succeeded: true });
    await full.drain();
    expect(h.receiver.at('/again-no-room')).toHaveLength(1);
    expect(h.receiver.at('/no-room-fresh')).toHaveLength(0);
  });

  it('an early try that never recorded (its dispatcher died mid-post): the next owner records it lost at once, posting nothing', async () => {
    const input = await anAttempt('/again-lost');
    await h.tw.pool.query('INSERT INTO attempt_claims (attempt_id, run, try) VALUES ($1, $2, 0)', [
      input.attemptId,
      `${EARLY_ATTEMPT_RUN_PREFIX}dead`,
    ]);
    const started = await handOff(input);
    expect(started.firstAttemptOutcomes?.[input.endpointId]).toMatchObject({
      kind: 'attempted',
      statusCode: null,
      error: 'timeout',
      succeeded: false,
      recorded: true,
    });
    expect(await recordOf(input.attemptId)).toEqual([
      { status_code: null, response_body: null, error: 'timeout', succeeded: false },
    ]);
    expect(h.receiver.at('/again-lost')).toHaveLength(0);
  });

  it('our database away before the post: the hand-off fails and nothing is posted; the next one posts once', async () => {
    const input = await anAttempt('/db-away');
    const early = createEarlyAttempts({ ...deps, pool: proxied }, { maxInFlight: 10 });
    await proxy.cut();
    try {
      await expect(early.handOff(deliverInput(input), { [input.endpointId]: input.attemptId })).rejects.toThrow();
    } finally {
      await proxy.restore();
    }
    expect(h.receiver.at('/db-away')).toHaveLength(0);
    const started = await early.handOff(deliverInput(input), { [input.endpointId]: input.attemptId });
    expect(started.firstAttemptOutcomes?.[input.endpointId]).toMatchObject({ statusCode: 200, recorded: true });
    expect(h.receiver.at('/db-away').map((r) => r.headers['service-delivery'])).toEqual([input.attemptId]);
    await early.drain();
  });

  it('an attempt 1 left to the workflow stays its: a later hand-off of the delivery (its start made, its row not marked) posts nothing', async () => {
    const input = await anAttempt('/left');
    const ids = { [input.endpointId]: input.attemptId };
    // Paused at the first hand-off: nothing is made, and the start's attempt 1 is left to the workflow.
    await h.tw.pool.query('UPDATE webhook_endpoints SET paused_at = now() WHERE id = $1', [input.endpointId]);
    const early = createEarlyAttempts(deps, { maxInFlight: 10 });
    const started = await early.handOff(deliverInput(input), ids);
    expect(started.firstAttemptOutcomes).toBeUndefined();
    await early.leaveToWorkflow(started, ids);
    // Resumed before the row is handed off again: the outbox must not post what the workflow now owns.
    await h.tw.pool.query('UPDATE webhook_endpoints SET paused_at = NULL WHERE id = $1', [input.endpointId]);
    const again = await early.handOff(deliverInput(input), ids);
    expect(again.firstAttemptOutcomes).toBeUndefined();
    expect(early.leaveToWorkflow(again, {})).toBeUndefined();
    await early.drain();
    expect(h.receiver.at('/left')).toHaveLength(0);
    expect(await recordOf(input.attemptId)).toEqual([]);
  });

  it('an endpoint to skip: the early attempt posts nothing, gives its claim back and records the skip', async () => {
    const input = await anAttempt('/other-disabled');
    await h.tw.pool.query('UPDATE webhook_endpoints SET disabled_at = now() WHERE id = $1', [input.endpointId]);
    const started = await handOff(input);
    expect(started.firstAttemptOutcomes).toEqual({
      [input.endpointId]: { kind: 'skipped', reason: 'endpoint_disabled' },
    });
    expect(
      (await h.tw.pool.query('SELECT 1 FROM attempt_claims WHERE attempt_id = $1', [input.attemptId])).rowCount,
    ).toBe(0);
    expect(h.receiver.at('/other-disabled')).toHaveLength(0);
  });

  it('a workflow started before the outbox owned attempt 1 meets an early claim: its record when written, else lost at once', async () => {
    const recorded = await anAttempt('/legacy-recorded');
    await h.tw.pool.query('INSERT INTO attempt_claims (attempt_id, run, try) VALUES ($1, $2, 0)', [
      recorded.attemptId,
      `${EARLY_ATTEMPT_RUN_PREFIX}old`,
    ]);
    await recordAttempt(
      h.tw.pool,
      attemptRecord(recorded, { statusCode: 204, responseBody: '', error: null, durationMs: 7, succeeded: true }),
    );
    expect(await workflowTry(recorded)).toMatchObject({
      kind: 'attempted',
      statusCode: 204,
      durationMs: 7,
      succeeded: true,
      early: true,
    });
    const unrecorded = await anAttempt('/legacy-unrecorded');
    await h.tw.pool.query('INSERT INTO attempt_claims (attempt_id, run, try) VALUES ($1, $2, 0)', [
      unrecorded.attemptId,
      `${EARLY_ATTEMPT_RUN_PREFIX}old`,
    ]);
    await expect(workflowTry(unrecorded)).rejects.toMatchObject({ type: FAILURE.attemptLost });
    expect(h.receiver.at('/legacy-recorded')).toHaveLength(0);
    expect(h.receiver.at('/legacy-unrecorded')).toHaveLength(0);
  });

  it("a workflow's try that claimed first (a workflow started before the outbox owned attempt 1): the outbox posts nothing and takes its record", async () => {
    const input = await anAttempt('/other-first');
    expect(await workflowTry(input)).toMatchObject({ kind: 'attempted', statusCode: 200 });
    const started = await handOff(input);
    expect(started.firstAttemptOutcomes?.[input.endpointId]).toMatchObject({ statusCode: 200, succeeded: true });
    expect(h.receiver.at('/other-first')).toHaveLength(1);
  });
});
