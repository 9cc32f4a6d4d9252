import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSignAndPost } from '../../../activities/sign-and-post';
import {
  createEarlyAttempts,
  EARLY_ATTEMPT_RUN_PREFIX,
  recordAttempt,
  type AttemptDeps,
  type EarlyAttemptResult,
} from '../../../attempt';
import {
  attemptRecord,
  FAILURE,
  type AttemptOutcome,
  type DeliverEventInput,
  type SignAndPostInput,
} from '../../../core/delivery-contract';
import { EARLY_RECORD_SILENCE_MS } from '../../../core/delivery-policy';
import { createPool, type Pool } from '../../../db/pool';
import { publishEvent } from '../../../domain/events';
import { firstAttemptId } from '../../../domain/outbox';
import { newId } from '../../../core/ids';
import { createHttpAgent } from '../../../infra/http-client';
import { inActivityContext } from '../../helpers/activity-context';
import { attemptsOf, createEndpoint, deliveryResult, parcel, startInput } from '../../helpers/delivery';
import { testDatabaseUrl } from '../../helpers/database';
import { FIXTURES, testConfig } from '../../helpers/env';
import { createAccount } from '../../helpers/fixtures';
import { useDeliveryHarness } from '../../helpers/harness';
import { startTcpProxy, type TcpProxy } from '../../helpers/tcp-proxy';
import { waitFor } from '../../helpers/wait';

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
 * Early first attempts (attempt/early.ts): the outbox dispatcher posts attempt 1 of a one-endpoint delivery under
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
 * The same attempt met in another process (its first task went to another worker, or came after a restart):
 * no promise to take, only the early try's claim in Postgres. The early tries and the workflow's tries are called
 * directly, each with its own deps (a try without the early tries' source is a try in another process), against
 * the real database and a real HTTPS receiver.
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
    firstAttemptIds: { [input.endpointId]: input.attemptId },
  });

  /** One early try of attempt 1, as a dispatcher makes it; resolves with what it came to, its writer still going. */
  async function earlyRun(input: SignAndPostInput, withDeps = deps) {
    const early = createEarlyAttempts(withDeps, { maxInFlight: 10 });
    void early.handOff(deliverInput(input));
    const result = (await early.take(input.attemptId)) as EarlyAttemptResult;
    return { result, early };
  }

  const workflowTry = (
    input: SignAndPostInput,
    withDeps: Parameters<typeof createSignAndPost>[0] = deps,
    claimTry = 0,
  ) => inActivityContext({}, () => createSignAndPost(withDeps)({ ...input, claimTry, notPostedRuns: [] }));

  /** A pool that counts the try's looks at the claim. */
  function countingLooks(): { pool: Pool; looks: () => number } {
    let looks = 0;
    const pool = Object.create(h.tw.pool) as Pool;
    pool.query = ((...args: Parameters<Pool['query']>) => {
      if ((args[0] as { name?: string } | undefined)?.name === 'attempt_claims_find_holder') looks++;
      return (h.tw.pool.query as (...a: unknown[]) => unknown)(...args);
    }) as Pool['query'];
    return { pool, looks: () => looks };
  }

  const recordOf = async (attemptId: string) =>
    (
      await h.tw.pool.query(
        'SELECT status_code, response_body, error, succeeded FROM delivery_attempts WHERE id = $1',
        [attemptId],
      )
    ).rows;

  it("adopts the early attempt's record: one POST, the outcome the early one's", async () => {
    const input = await anAttempt('/other-adopt');
    const { result } = await earlyRun(input);
    expect(result.outcome).toMatchObject({ kind: 'attempted', statusCode: 200, recorded: true, early: true });
    expect(await workflowTry(input)).toMatchObject({
      kind: 'attempted',
      statusCode: 200,
      succeeded: true,
      recorded: true,
      early: true,
    });
    expect(h.receiver.at('/other-adopt')).toHaveLength(1);
  });

  it('waits for an early attempt still under way, and adopts its record once written', async () => {
    const input = await anAttempt('/other-wait');
    // An early try's claim, its record not yet written (its post under way).
    await h.tw.pool.query('INSERT INTO attempt_claims (attempt_id, run, try) VALUES ($1, $2, 0)', [
      input.attemptId,
      `${EARLY_ATTEMPT_RUN_PREFIX}test`,
    ]);
    const { pool, looks } = countingLooks();
    const waiting = workflowTry(input, { ...deps, pool });
    await waitFor(() => looks() >= 2, { what: 'the try to wait for the early record' });
    await recordAttempt(
      h.tw.pool,
      attemptRecord(input, { statusCode: 204, responseBody: '', error: null, durationMs: 7, succeeded: true }),
    );
    expect(await waiting).toMatchObject({
      kind: 'attempted',
      statusCode: 204,
      durationMs: 7,
      succeeded: true,
      early: true,
    });
    expect(h.receiver.at('/other-wait')).toHaveLength(0);
  });

  it("our database cut between the early try's POST and its record: the try elsewhere adopts the answer, never a timeout", async () => {
    const input = await anAttempt('/other-cut');
    // The early try reads through the proxy; the cut lands while the receiver answers, so its record cannot be written.
    h.receiver.script('/other-cut', () => {
      void proxy.cut();
      return { status: 503, body: 'busy, try later', delayMs: 50 };
    });
    try {
      const { result, early } = await earlyRun(input, { ...deps, pool: proxied });
      expect(result.outcome).toMatchObject({ kind: 'attempted', statusCode: 503, recorded: false, early: true });
      expect(early.inFlight()).toBe(1); // its writer, retrying
      // The try, in a process of its own with Postgres answering, finds the early claim and no record: it waits.
      const { pool, looks } = countingLooks();
      const waiting = workflowTry(input, { ...deps, pool });
      await waitFor(() => looks() >= 1, { what: 'the try to look at the early claim' });
      await proxy.restore();
      expect(await waiting).toMatchObject({
        kind: 'attempted',
        statusCode: 503,
        succeeded: false,
        recorded: true,
        early: true,
      });
      await early.drain();
      expect(early.inFlight()).toBe(0);
    } finally {
      await proxy.restore().catch(() => undefined);
    }
    expect(await recordOf(input.attemptId)).toEqual([
      { status_code: 503, response_body: 'busy, try later', error: null, succeeded: false },
    ]);
    expect(h.receiver.at('/other-cut').map((r) => r.headers['service-delivery'])).toEqual([input.attemptId]);
  });

  it('an endpoint to skip: the early attempt posts nothing, gives its claim back and skips; the try skips it', async () => {
    const input = await anAttempt('/other-disabled');
    await h.tw.pool.query('UPDATE webhook_endpoints SET disabled_at = now() WHERE id = $1', [input.endpointId]);
    const { result } = await earlyRun(input);
    expect(result).toEqual({ outcome: { kind: 'skipped', reason: 'endpoint_disabled' } });
    expect(
      (await h.tw.pool.query('SELECT 1 FROM attempt_claims WHERE attempt_id = $1', [input.attemptId])).rowCount,
    ).toBe(0);
    expect(await workflowTry(input)).toEqual({ kind: 'skipped', reason: 'endpoint_disabled' });
    expect(h.receiver.at('/other-disabled')).toHaveLength(0);
  });

  it('an early try that never recorded (its process died mid-post): lost only after a window of Postgres answering with no record', async () => {
    const input = await anAttempt('/other-lost');
    await h.tw.pool.query(
      `INSERT INTO attempt_claims (attempt_id, run, try, claimed_at) VALUES ($1, $2, 0, now() - interval '1 minute')`,
      [input.attemptId, `${EARLY_ATTEMPT_RUN_PREFIX}dead`],
    );
    const started = Date.now();
    await expect(workflowTry(input)).rejects.toMatchObject({ type: FAILURE.attemptLost });
    expect(Date.now() - started).toBeGreaterThan(EARLY_RECORD_SILENCE_MS);
    expect(h.receiver.at('/other-lost')).toHaveLength(0);
  });

  it("an early try still within its span when the try's time runs out: not posted, and the next try decides", async () => {
    const input = await anAttempt('/other-young');
    const run = `${EARLY_ATTEMPT_RUN_PREFIX}young`;
    await h.tw.pool.query('INSERT INTO attempt_claims (attempt_id, run, try) VALUES ($1, $2, 0)', [
      input.attemptId,
      run,
    ]);
    // Its span (timeout + two database deadlines) outlasts the try (timeout + margin, less a poll): undecided.
    await expect(workflowTry(input)).rejects.toMatchObject({ type: FAILURE.earlyAttemptUndecided });
    // The next try waits out the rest of the span, then the window, and finds the run dead.
    await expect(workflowTry(input, deps, 1)).rejects.toMatchObject({ type: FAILURE.attemptLost });
    expect(
      (
        await h.tw.pool.query<{ run: string }>('SELECT run FROM attempt_claims WHERE attempt_id = $1', [
          input.attemptId,
        ])
      ).rows,
    ).toEqual([{ run }]);
    expect(h.receiver.at('/other-young')).toHaveLength(0);
  }, 30_000);

  it("the workflow's try claimed first: the early attempt posts nothing", async () => {
    const input = await anAttempt('/other-first');
    expect(await workflowTry(input)).toMatchObject({ kind: 'attempted', statusCode: 200 });
    expect((await earlyRun(input)).result).toEqual({});
    expect(h.receiver.at('/other-first')).toHaveLength(1);
  });

  it('in one process the try takes the early outcome without a query, once', async () => {
    const input = await anAttempt('/same-process');
    const early = createEarlyAttempts(deps, { maxInFlight: 10 });
    void early.handOff(deliverInput(input));
    expect(early.inFlight()).toBe(1);
    await early.drain();
    expect(await workflowTry(input, { ...deps, early })).toMatchObject({
      kind: 'attempted',
      statusCode: 200,
      early: true,
    });
    expect(early.take(input.attemptId)).toBeUndefined();
    expect(h.receiver.at('/same-process')).toHaveLength(1);
  });
});
