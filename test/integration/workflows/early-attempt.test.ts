import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEarlyAttempts } from '../../../activities/early-attempts';
import { createEarlyAttempt, createSignAndPost, type SignAndPostDeps } from '../../../activities/sign-and-post';
import { attemptRecord, EARLY_ATTEMPT_RUN_PREFIX, type AttemptOutcome, type SignAndPostInput } from '../../../core/delivery-contract';
import { recordAttempt } from '../../../domain/deliveries';
import { publishEvent } from '../../../domain/events';
import { firstAttemptId } from '../../../domain/outbox';
import { newId } from '../../../core/ids';
import { createHttpAgent } from '../../../infra/http-client';
import { inActivityContext } from '../../helpers/activity-context';
import { attemptsOf, createEndpoint, deliveryResult, parcel } from '../../helpers/delivery';
import { FIXTURES, testConfig } from '../../helpers/env';
import { createAccount } from '../../helpers/fixtures';
import { useDeliveryHarness } from '../../helpers/harness';
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
 * Early first attempts (activities/early-attempts.ts): the outbox dispatcher posts attempt 1 of a one-endpoint
 * delivery beside its workflow's start, under the id fixed at hand-off, and the workflow's try adopts what it came
 * to. One POST per attempt id whoever meets it first, and the history shows the attempt as before.
 */
describe('early first attempts', () => {
  const config = testConfig({ DELIVERY_RETRY_DELAYS: '50ms', DELIVERY_TIMEOUT: '2s' });
  const h = useDeliveryHarness(config);

  async function publishTo(pathname: string) {
    const accountId = await createAccount(h.tw.pool);
    const endpoint = await createEndpoint(h.tw.pool, { accountId, url: `${h.receiver.url}${pathname}` });
    const published = await publishEvent({ pool: h.tw.pool }, { accountId, livemode: false, type: 'parcel.created', data: { parcel: parcel() } });
    const { rows } = await h.tw.pool.query<{ id: string }>('SELECT id FROM deliveries WHERE event_id = $1', [published.event.id]);
    return { endpoint, eventId: published.event.id, workflowId: published.workflowId as string, deliveryId: rows[0]!.id };
  }

  it('the dispatcher posts attempt 1 under the id fixed at hand-off; the workflow adopts it and posts nothing', async () => {
    const { endpoint, eventId, workflowId, deliveryId } = await publishTo('/early-ok');
    expect(await deliveryResult(h.tw.client, eventId)).toMatchObject({ endpoints: [{ outcome: 'delivered', attempts: 1 }] });

    const arrivals = h.receiver.at('/early-ok');
    expect(arrivals.map((r) => r.headers['service-delivery'])).toEqual([firstAttemptId(deliveryId)]);
    const attempts = await attemptsOf(h.tw.pool, endpoint.id);
    expect(attempts.map((a) => [a.id, a.attempt, a.status_code, a.succeeded])).toEqual([[firstAttemptId(deliveryId), 1, 200, true]]);
    const claim = await h.tw.pool.query<{ run: string }>('SELECT run FROM attempt_claims WHERE attempt_id = $1', [firstAttemptId(deliveryId)]);
    expect(claim.rows[0]?.run.startsWith(EARLY_ATTEMPT_RUN_PREFIX)).toBe(true);

    // The operator's view: one local-activity marker, its outcome the attempt's, saying it was made early.
    const history = await h.tw.client.workflow.getHandle(workflowId).fetchHistory();
    const events = history.events ?? [];
    expect(markerOutcomes(events)).toEqual([expect.objectContaining({ kind: 'attempted', statusCode: 200, succeeded: true, early: true })]);
    expect(events).toHaveLength(6);
    if (process.env.UPDATE_HISTORIES === '1') {
      writeFileSync(path.join(FIXTURES, 'histories', 'success-early-first-attempt.binpb'), temporal.api.history.v1.History.encode(history).finish());
    }
  });

  it('a failed early attempt is attempt 1 failed: the ladder goes on with attempt 2 from the workflow', async () => {
    h.receiver.script('/early-retry', (index) => (index === 0 ? { status: 500 } : { status: 200 }));
    const { endpoint, eventId, deliveryId } = await publishTo('/early-retry');
    expect(await deliveryResult(h.tw.client, eventId)).toMatchObject({ endpoints: [{ outcome: 'delivered', attempts: 2 }] });
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
 * no promise to take, only the early run's claim in Postgres. Activity functions called directly, against the
 * real database and a real HTTPS receiver.
 */
describe('early first attempts met from another process', () => {
  const config = testConfig({ DELIVERY_TIMEOUT: '300ms' });
  const h = useDeliveryHarness(config);
  let deps: SignAndPostDeps;
  beforeAll(() => {
    deps = { config, pool: h.tw.pool, http: createHttpAgent(config) };
  });
  afterAll(async () => {
    await deps?.http.close();
  });

  /**
   * An attempt of a stored event to an endpoint made after it: the event's own fan-out is empty, so no dispatcher
   * (this file's or another's, on the same database) delivers it; only the calls below post.
   */
  async function anAttempt(pathname: string): Promise<SignAndPostInput> {
    const accountId = await createAccount(h.tw.pool);
    const published = await publishEvent({ pool: h.tw.pool }, { accountId, livemode: false, type: 'parcel.created', data: { parcel: parcel() } });
    const endpoint = await createEndpoint(h.tw.pool, { accountId, url: `${h.receiver.url}${pathname}` });
    return {
      attemptId: newId('attempt'),
      endpointId: endpoint.id,
      eventId: published.event.id,
      eventType: 'parcel.created',
      accountId,
      livemode: false,
      attempt: 1,
      timeoutMs: 300,
    };
  }
  const workflowTry = (input: SignAndPostInput, withEarly = deps) =>
    inActivityContext({}, () => createSignAndPost(withEarly)({ ...input, claimTry: 0, notPostedRuns: [] }));

  it("adopts the early attempt's record: one POST, the outcome the early one's", async () => {
    const input = await anAttempt('/other-adopt');
    const early = await createEarlyAttempt(deps, () => undefined)(input);
    expect(early.outcome).toMatchObject({ kind: 'attempted', statusCode: 200, recorded: true, early: true });
    expect(await workflowTry(input)).toMatchObject({ kind: 'attempted', statusCode: 200, succeeded: true, recorded: true, early: true });
    expect(h.receiver.at('/other-adopt')).toHaveLength(1);
  });

  it('waits for an early attempt still under way, and adopts its record once written', async () => {
    const input = await anAttempt('/other-wait');
    // An early run's claim, its record not yet written (its post under way).
    await h.tw.pool.query('INSERT INTO attempt_claims (attempt_id, run, try) VALUES ($1, $2, 0)', [input.attemptId, `${EARLY_ATTEMPT_RUN_PREFIX}test`]);
    // Counts the try's reads of the claim, so the record is written only once it is waiting.
    let polls = 0;
    const pool = Object.create(h.tw.pool) as typeof h.tw.pool;
    pool.query = ((...args: Parameters<typeof h.tw.pool.query>) => {
      if ((args[0] as { name?: string } | undefined)?.name === 'endpoints_find_attempt_claim') polls++;
      return (h.tw.pool.query as (...a: unknown[]) => unknown)(...args);
    }) as typeof h.tw.pool.query;
    const waiting = workflowTry(input, { ...deps, pool });
    await waitFor(() => polls >= 2, { what: 'the try to wait for the early record' });
    await recordAttempt(h.tw.pool, attemptRecord(input, { statusCode: 204, responseBody: '', error: null, durationMs: 7, succeeded: true }));
    expect(await waiting).toMatchObject({ kind: 'attempted', statusCode: 204, durationMs: 7, succeeded: true, early: true });
    expect(h.receiver.at('/other-wait')).toHaveLength(0);
  });

  it('an endpoint to skip: the early attempt posts nothing and gives its claim back; the try skips it', async () => {
    const input = await anAttempt('/other-disabled');
    await h.tw.pool.query('UPDATE webhook_endpoints SET disabled_at = now() WHERE id = $1', [input.endpointId]);
    const early = await createEarlyAttempt(deps, () => undefined)(input);
    expect(early.notPostedRun?.startsWith(EARLY_ATTEMPT_RUN_PREFIX)).toBe(true);
    expect((await h.tw.pool.query('SELECT 1 FROM attempt_claims WHERE attempt_id = $1', [input.attemptId])).rowCount).toBe(0);
    expect(await workflowTry(input)).toEqual({ kind: 'skipped', reason: 'endpoint_disabled' });
    expect(h.receiver.at('/other-disabled')).toHaveLength(0);
  });

  it('an early run that never recorded (its process died mid-post) leaves the attempt lost once it has surely ended', async () => {
    const input = await anAttempt('/other-lost');
    await h.tw.pool.query(
      `INSERT INTO attempt_claims (attempt_id, run, try, claimed_at) VALUES ($1, $2, 0, now() - interval '1 minute')`,
      [input.attemptId, `${EARLY_ATTEMPT_RUN_PREFIX}dead`],
    );
    await expect(workflowTry(input)).rejects.toMatchObject({ type: 'AttemptLost' });
    expect(h.receiver.at('/other-lost')).toHaveLength(0);
  });

  it("the workflow's try claimed first: the early attempt posts nothing", async () => {
    const input = await anAttempt('/other-first');
    expect(await workflowTry(input)).toMatchObject({ kind: 'attempted', statusCode: 200 });
    expect(await createEarlyAttempt(deps, () => undefined)(input)).toEqual({});
    expect(h.receiver.at('/other-first')).toHaveLength(1);
  });

  it('in one process the try takes the early outcome without a query, once', async () => {
    const input = await anAttempt('/same-process');
    const early = createEarlyAttempts(deps, { maxInFlight: 10 });
    early.begin({
      eventId: input.eventId,
      eventType: input.eventType,
      accountId: input.accountId,
      livemode: input.livemode,
      endpointIds: [input.endpointId],
      retryDelaysMs: [10],
      timeoutMs: input.timeoutMs,
      failingThreshold: 3,
      attemptKind: 'local',
      firstAttemptIds: { [input.endpointId]: input.attemptId },
    });
    expect(early.inFlight()).toBe(1);
    await early.drain();
    expect(await workflowTry(input, { ...deps, early })).toMatchObject({ kind: 'attempted', statusCode: 200, early: true });
    expect(early.take(input.attemptId)).toBeUndefined();
    expect(h.receiver.at('/same-process')).toHaveLength(1);
  });
});
