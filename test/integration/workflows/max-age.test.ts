import { randomUUID } from 'node:crypto';
import { temporal } from '@temporalio/proto';
import { beforeEach, describe, expect, it } from 'vitest';
import { deliveryInput, deliveryStartOptions } from '../../../src/domain/delivery-start';
import { listDeliveries } from '../../../src/domain/deliveries';
import { pauseEndpoint } from '../../../src/domain/endpoint-lifecycle';
import { registerEndpoint } from '../../../src/domain/endpoints';
import { getEvent } from '../../../src/domain/event-log';
import { publishEvent } from '../../../src/domain/events';
import type { Pool } from '../../../src/db/pool';
import type { PoolClient } from 'pg';
import { deliveryResult, parcel } from '../../helpers/delivery';
import { testConfig } from '../../helpers/env';
import { createAccount } from '../../helpers/fixtures';
import { historyText } from '../../helpers/history-text';
import { useDeliveryHarness } from '../../helpers/harness';
import type { ReceivedRequest } from '../../helpers/receiver';
import { waitFor } from '../../helpers/wait';
import { CLI_ACTOR } from '../../../src/domain/audit-log';

/** The id and the type of the event a request posted. */
const idOf = (request: ReceivedRequest) => (JSON.parse(request.rawBody.toString()) as { id: string }).id;
const typeOf = (request: ReceivedRequest) => (JSON.parse(request.rawBody.toString()) as { type: string }).type;

/**
 * DELIVERY_MAX_AGE: a delivery not answered 2xx within it is given up as `expired`, whatever it waits for (its rate
 * limit, a Retry-After, its parcel's earlier event); the wait ends at the max age and nothing more is posted. And a
 * long wait for a parcel's earlier event continues the workflow as new past its bound of re-checks.
 */
describe('delivery: max age', () => {
  // Short enough for a test, and below the waits it cuts: a Retry-After of an hour, a receiver's 8 s answer.
  const config = testConfig({ DELIVERY_MAX_AGE: '5s', DELIVERY_RETRY_DELAYS: '200ms,200ms', DELIVERY_TIMEOUT: '10s' });
  const h = useDeliveryHarness(config);
  let accountId: string;
  const scope = () => ({ accountId, livemode: false });

  beforeEach(async () => {
    accountId = await createAccount(h.tw.pool);
  });

  const endpointAt = async (pathname: string, options: { ordering?: 'none' | 'parcel'; rateLimit?: number } = {}) => {
    const { id } = await registerEndpoint(
      { pool: h.tw.pool, config },
      scope(),
      {
        url: `${h.receiver.url}${pathname}`,
        ordering: options.ordering,
      },
      CLI_ACTOR,
    );
    if (options.rateLimit !== undefined)
      await h.tw.pool.query('UPDATE webhook_endpoints SET rate_limit = $2 WHERE id = $1', [id, options.rateLimit]);
    return id;
  };
  const publish = async (parcelId = 'p_age', type = 'parcel.in_transit', pool: Pool = h.tw.pool) =>
    (await publishEvent({ pool }, { accountId, livemode: false, type, data: { parcel: parcel({ id: parcelId }) } }))
      .event.id;
  const postedIds = (pathname: string) => h.receiver.at(pathname).map(idOf);

  /** The delivery as the event's deliveries show it, and the deliveries log's entries of the event. */
  async function shown(eventId: string, endpointId: string) {
    const event = await getEvent(h.tw.pool, scope(), eventId);
    const log = await listDeliveries({ pool: h.tw.pool, config }, scope(), endpointId, { limit: 100, eventId });
    return { delivery: event.deliveries.find((d) => d.endpoint_id === endpointId)!, log: log.data };
  }

  async function expectExpired(eventId: string, endpointId: string, attemptsMade: number) {
    expect(await deliveryResult(h.tw.client, eventId)).toMatchObject({
      endpoints: [{ endpointId, outcome: 'expired', attempts: attemptsMade }],
    });
    const { delivery, log } = await shown(eventId, endpointId);
    expect(delivery).toMatchObject({ status: 'failed', reason: 'expired', attempts: attemptsMade });
    // Newest first: the give-up's entry, under the number of the attempt not made, with no answer.
    expect(log[0]).toMatchObject({ attempt: attemptsMade + 1, reason: 'expired', succeeded: false, status_code: null });
    expect(log.slice(1).every((entry) => entry.reason === null)).toBe(true);
    expect(log).toHaveLength(attemptsMade + 1);
  }

  it('gives up a delivery whose rate-limit place comes after its max age, without posting it', async () => {
    const endpointId = await endpointAt('/throttled', { rateLimit: 1 });
    // One a second: the places of the later events fall seconds past their 5 s.
    const eventIds: string[] = [];
    for (let i = 0; i < 10; i++) eventIds.push(await publish(`p_t${i}`));
    const results = (await Promise.all(eventIds.map((id) => deliveryResult(h.tw.client, id, 30_000)))) as {
      endpoints: { outcome: string }[];
    }[];
    const outcomes = results.map((r) => r.endpoints[0]!.outcome);
    expect(outcomes.every((o) => o === 'delivered' || o === 'expired')).toBe(true);
    expect(outcomes.filter((o) => o === 'delivered').length).toBeGreaterThanOrEqual(1);
    expect(outcomes.filter((o) => o === 'expired').length).toBeGreaterThanOrEqual(3);
    // Given up means never posted: the receiver got exactly the delivered ones.
    const delivered = eventIds.filter((_, i) => outcomes[i] === 'delivered');
    expect(postedIds('/throttled').sort()).toEqual(delivered.sort());
    for (const eventId of eventIds.filter((_, i) => outcomes[i] === 'expired'))
      await expectExpired(eventId, endpointId, 0);
  });

  it('gives up a delivery held by a Retry-After past its max age: the retry after the answer, and attempt 1 held from the start', async () => {
    const endpointId = await endpointAt('/busy');
    h.receiver.script('/busy', { status: 429, headers: { 'retry-after': '3600' } });
    const answered = await publish('p_r1');
    await expectExpired(answered, endpointId, 1);
    // The endpoint is held for an hour: the next event's attempt 1 waits for it, and expires first.
    const held = await publish('p_r2');
    await expectExpired(held, endpointId, 0);
    expect(postedIds('/busy')).toEqual([answered]);
  });

  it('gives up a delivery held by its paused endpoint at its max age, and a retry held after a failed attempt', async () => {
    const endpointId = await endpointAt('/paused-age');
    let answer = (): void => undefined;
    const paused = new Promise<void>((resolve) => (answer = resolve));
    // Attempt 1 is answered 500 once the endpoint is paused: its retry finds it paused, held until the max age.
    h.receiver.script('/paused-age', { status: 500, until: paused });
    const retried = await publish('p_pa1');
    await waitFor(async () => postedIds('/paused-age').includes(retried), { what: 'attempt 1 posted' });
    await pauseEndpoint({ pool: h.tw.pool, config }, scope(), endpointId, CLI_ACTOR);
    answer();
    const held = await publish('p_pa2');
    await expectExpired(held, endpointId, 0);
    await expectExpired(retried, endpointId, 1);
    expect(postedIds('/paused-age')).toEqual([retried]);
    // The held waits counted nothing: no abandonment, no failing mark.
    const { rows } = await h.tw.pool.query('SELECT abandoned_streak, status FROM webhook_endpoints WHERE id = $1', [
      endpointId,
    ]);
    expect(rows[0]).toEqual({ abandoned_streak: 0, status: 'enabled' });
  });

  it('gives up an ordered delivery still waiting for its parcel’s earlier event at its max age', async () => {
    const endpointId = await endpointAt('/ordered-age', { ordering: 'parcel' });
    // The first event's attempt takes 8 s to be answered: its successor's 5 s run out while it waits.
    h.receiver.script('/ordered-age', (_, request) =>
      typeOf(request) === 'parcel.created' ? { status: 200, delayMs: 8_000 } : { status: 200 },
    );
    const first = await publish('p_o', 'parcel.created');
    await waitFor(() => postedIds('/ordered-age').includes(first), { what: 'the first event posted' });
    const second = await publish('p_o', 'parcel.in_transit');
    await expectExpired(second, endpointId, 0);
    expect(await deliveryResult(h.tw.client, first)).toMatchObject({
      endpoints: [{ outcome: 'delivered', attempts: 1 }],
    });
    expect(postedIds('/ordered-age')).toEqual([first]);
  });
});

/**
 * The pool a publish sees inside this test's own open transaction: its transactions become savepoints of it, so
 * the event and the test's change to it commit together and no dispatcher sees the event in between.
 */
function inTransaction(client: PoolClient): Pool {
  const statement = {
    BEGIN: 'SAVEPOINT publish',
    COMMIT: 'RELEASE SAVEPOINT publish',
    ROLLBACK: 'ROLLBACK TO SAVEPOINT publish',
  };
  const nested = {
    query: (text: unknown, values?: unknown) =>
      typeof text === 'string' && text in statement
        ? client.query(statement[text as keyof typeof statement])
        : client.query(text as string, values as unknown[]),
    release: () => undefined,
  };
  return { query: client.query.bind(client), connect: () => Promise.resolve(nested) } as unknown as Pool;
}

describe('delivery: a long wait for a parcel’s earlier event', () => {
  const config = testConfig({ DELIVERY_RETRY_DELAYS: '1s,1s,1s,1s', DELIVERY_TIMEOUT: '2s' });
  const h = useDeliveryHarness(config);

  it('continues the workflow as new past its bound of re-checks, and still posts in order', async () => {
    const accountId = await createAccount(h.tw.pool);
    const scope = { accountId, livemode: false };
    const { id: endpointId } = await registerEndpoint(
      { pool: h.tw.pool, config },
      scope,
      {
        url: `${h.receiver.url}/long-wait`,
        ordering: 'parcel',
      },
      CLI_ACTOR,
    );
    const personal = { recipient_name: `Amina ${randomUUID()}`, description: `Shirts ${randomUUID()}` };
    const data = { parcel: parcel({ id: 'p_long', ...personal }) };
    // The first event fails four times (about 5 s of ladder), then succeeds; every answer echoes the body.
    h.receiver.script('/long-wait', (index, request) => ({
      status: typeOf(request) === 'parcel.created' && index < 4 ? 500 : 200,
      body: request.rawBody.toString(),
    }));
    const first = (
      await publishEvent({ pool: h.tw.pool }, { accountId, livemode: false, type: 'parcel.created', data })
    ).event;

    // The second is stored as handed off, so this test starts its workflow with a bound of two re-checks a run.
    const client = await h.tw.pool.connect();
    let second: string;
    try {
      await client.query('BEGIN');
      second = (
        await publishEvent(
          { pool: inTransaction(client) },
          { accountId, livemode: false, type: 'parcel.in_transit', data },
        )
      ).event.id;
      await client.query('UPDATE events SET dispatched_at = now() WHERE id = $1', [second]);
      await client.query('COMMIT');
    } finally {
      client.release();
    }
    const { rows } = await h.tw.pool.query<{ id: string; sequence: number }>(
      `SELECT d.id, e.sequence FROM deliveries d JOIN events e ON e.id = d.event_id WHERE d.event_id = $1`,
      [second],
    );
    const input = {
      ...deliveryInput(
        {
          eventId: second,
          eventType: 'parcel.in_transit',
          accountId,
          livemode: false,
          trigger: 'automatic',
          endpointIds: [endpointId],
          deliveryIds: { [endpointId]: rows[0]!.id },
          parcelOrder: { parcelId: 'p_long', sequence: rows[0]!.sequence, endpointIds: [endpointId] },
        },
        config,
      ),
      parcelRechecksPerRun: 2,
    };
    await h.tw.client.workflow.start(
      'deliverEvent',
      deliveryStartOptions(input, { taskQueue: config.temporal.taskQueue, eager: false }),
    );

    expect(await deliveryResult(h.tw.client, second, 45_000)).toEqual({
      eventId: second,
      endpoints: [{ endpointId, outcome: 'delivered', attempts: 1 }],
    });
    const posted = h.receiver.at('/long-wait').map(idOf);
    expect(posted.indexOf(second)).toBe(posted.length - 1);
    expect(posted.filter((id) => id === first.id)).toHaveLength(5);

    // The wait ran over more than one run: each earlier run continued as new, and none re-read the lane more
    // than its bound (a check is one activity, local or regular, before every wait and once after the last).
    const runsOf = async () => {
      const runs: { status: string; checks: number; text: string }[] = [];
      for await (const execution of h.tw.client.workflow.list({ query: `WorkflowId = "event:${second}"` })) {
        const history = await h.tw.client.workflow.getHandle(execution.workflowId, execution.runId).fetchHistory();
        const checks = (history.events ?? []).filter(
          (e) =>
            e.eventType === temporal.api.enums.v1.EventType.EVENT_TYPE_MARKER_RECORDED ||
            (e.eventType === temporal.api.enums.v1.EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED &&
              e.activityTaskScheduledEventAttributes?.activityType?.name === 'checkParcelLane'),
        ).length;
        runs.push({ status: execution.status.name, checks, text: historyText(history) });
      }
      return runs;
    };
    // Visibility lags the runs a little: wait until it lists the completed one.
    const runs = await waitFor(
      async () => {
        const listed = await runsOf();
        return listed.some((r) => r.status === 'COMPLETED') ? listed : undefined;
      },
      { timeoutMs: 20_000, what: 'the runs of the waiting workflow listed' },
    );
    const continued = runs.filter((r) => r.status === 'CONTINUED_AS_NEW');
    expect(continued.length).toBeGreaterThanOrEqual(1);
    for (const run of continued) expect(run.checks).toBeLessThanOrEqual(3);
    // No run's history, the inputs carried across continue-as-new included, holds a personal value or the path.
    for (const run of runs)
      for (const value of [personal.recipient_name, personal.description, '/long-wait'])
        expect(run.text).not.toContain(value);
  });
});
