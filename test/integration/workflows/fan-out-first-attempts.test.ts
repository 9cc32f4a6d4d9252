import { temporal } from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AttemptOutcome, SignAndPostInput } from '../../../src/core/delivery-contract';
import { publishEvent } from '../../../src/domain/events';
import { firstAttemptId } from '../../../src/domain/outbox';
import { attemptsOf, createEndpoint, deliveryResult, parcel, startInput } from '../../helpers/delivery';
import { testConfig } from '../../helpers/env';
import { createAccount } from '../../helpers/fixtures';
import { startReceiver, type Receiver } from '../../helpers/receiver';
import { startTestWorker, type TestWorker } from '../../helpers/temporal';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

const json = <T>(data: Uint8Array | null | undefined): T => JSON.parse(Buffer.from(data ?? []).toString()) as T;

const sortedById = <T extends { endpointId: string }>(ladders: T[]): T[] =>
  [...ladders].sort((x, y) => x.endpointId.localeCompare(y.endpointId));

/** The signAndPost activities the workflow scheduled, each with its input and (once completed) its outcome. */
function attemptActivities(events: HistoryEvent[]): { input: SignAndPostInput; outcome?: AttemptOutcome }[] {
  const scheduled = events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'signAndPost');
  return scheduled.map((e) => {
    const completed = events.find(
      (c) => Number(c.activityTaskCompletedEventAttributes?.scheduledEventId) === Number(e.eventId),
    );
    const result = completed?.activityTaskCompletedEventAttributes?.result?.payloads?.[0]?.data;
    return {
      input: json<SignAndPostInput>(e.activityTaskScheduledEventAttributes?.input?.payloads?.[0]?.data),
      ...(result ? { outcome: json<AttemptOutcome>(result) } : {}),
    };
  });
}

/**
 * A fan-out on the fast path: the outbox dispatcher posts attempt 1 of every endpoint before the start, side by
 * side, each under the id fixed at hand-off, and the start carries each outcome on record; an endpoint still
 * posting when the start's short wait ends is adopted by its ladder's try. Every endpoint is a real HTTPS receiver
 * of its own on loopback.
 */
describe('fan-out: every attempt 1 made by the dispatcher before the start', () => {
  const config = testConfig({ DELIVERY_RETRY_DELAYS: '50ms,50ms', DELIVERY_TIMEOUT: '10s' });
  const h = {} as { tw: TestWorker };
  const receivers: Receiver[] = [];
  beforeAll(async () => {
    h.tw = await startTestWorker(config);
    for (let i = 0; i < 4; i++) receivers.push(await startReceiver());
  });
  afterAll(async () => {
    for (const receiver of receivers) await receiver.close();
    await h.tw?.stop();
  });

  async function publishTo(urls: string[]) {
    const accountId = await createAccount(h.tw.pool);
    const endpoints = [];
    for (const url of urls) endpoints.push(await createEndpoint(h.tw.pool, { accountId, url }));
    const published = await publishEvent(
      { pool: h.tw.pool },
      { accountId, livemode: false, type: 'parcel.created', data: { parcel: parcel() } },
    );
    const { rows } = await h.tw.pool.query<{ id: string; endpoint_id: string }>(
      'SELECT id, endpoint_id FROM deliveries WHERE event_id = $1',
      [published.event.id],
    );
    const deliveryOf = Object.fromEntries(rows.map((r) => [r.endpoint_id, r.id]));
    return { endpoints, deliveryOf, eventId: published.event.id, workflowId: published.workflowId as string };
  }

  it('a first-try success to four endpoints is one workflow task: five history events, no activity', async () => {
    const { endpoints, deliveryOf, eventId, workflowId } = await publishTo(receivers.map((r) => `${r.url}/all-ok`));
    const result = (await deliveryResult(h.tw.client, eventId)) as { endpoints: { endpointId: string }[] };
    expect(sortedById(result.endpoints)).toEqual(
      sortedById(endpoints.map((e) => ({ endpointId: e.id, outcome: 'delivered', attempts: 1 }))),
    );

    const history = await h.tw.client.workflow.getHandle(workflowId).fetchHistory();
    const events = history.events ?? [];
    const outcomes = startInput(events).firstAttemptOutcomes ?? {};
    for (const [i, endpoint] of endpoints.entries()) {
      expect(outcomes[endpoint.id]).toMatchObject({
        kind: 'attempted',
        statusCode: 200,
        succeeded: true,
        recorded: true,
        early: true,
      });
      expect(receivers[i]!.at('/all-ok').map((r) => r.headers['service-delivery'])).toEqual([
        firstAttemptId(deliveryOf[endpoint.id]!),
      ]);
    }
    expect(attemptActivities(events)).toEqual([]);
    expect(events).toHaveLength(5);
  });

  it("a slow endpoint's attempt 1 is on record before the start, as the others' are; nothing is posted twice", async () => {
    const [fastA, fastB, slow, failing] = receivers as [Receiver, Receiver, Receiver, Receiver];
    slow.script('/mixed', () => ({ status: 200, delayMs: 1_000 }));
    failing.script('/mixed', (index) => ({ status: index < 2 ? 500 : 200 }));
    const { endpoints, deliveryOf, eventId, workflowId } = await publishTo(
      [fastA, fastB, slow, failing].map((r) => `${r.url}/mixed`),
    );
    const [a, b, s, f] = endpoints.map((e) => e.id) as [string, string, string, string];
    const result = (await deliveryResult(h.tw.client, eventId)) as { endpoints: { endpointId: string }[] };
    expect(sortedById(result.endpoints)).toEqual(
      sortedById([
        { endpointId: a, outcome: 'delivered', attempts: 1 },
        { endpointId: b, outcome: 'delivered', attempts: 1 },
        { endpointId: s, outcome: 'delivered', attempts: 1 },
        { endpointId: f, outcome: 'delivered', attempts: 3 },
      ]),
    );

    // Attempt 1 of every endpoint went out under its own id and rode in the start: the start waited for the slow
    // one, and no activity made an attempt 1.
    const events = (await h.tw.client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
    const outcomes = startInput(events).firstAttemptOutcomes ?? {};
    expect(outcomes[a]).toMatchObject({ statusCode: 200, succeeded: true, early: true });
    expect(outcomes[b]).toMatchObject({ statusCode: 200, succeeded: true, early: true });
    expect(outcomes[s]).toMatchObject({ statusCode: 200, succeeded: true, early: true });
    expect(outcomes[f]).toMatchObject({ statusCode: 500, succeeded: false, early: true });
    const activities = attemptActivities(events);
    expect(activities.filter((x) => x.input.attempt === 1)).toEqual([]);
    // The failing one's ladder: attempts 2 and 3 as regular activities.
    expect(activities.filter((x) => x.input.endpointId === f).map((x) => x.input.attempt)).toEqual([2, 3]);

    // Each endpoint was posted to once per attempt, each attempt id once, all on record as posted.
    const byReceiver = [fastA, fastB, slow, failing].map((r) =>
      r.at('/mixed').map((req) => req.headers['service-delivery'] as string),
    );
    expect(byReceiver.map((ids) => ids.length)).toEqual([1, 1, 1, 3]);
    const all = byReceiver.flat();
    expect(new Set(all).size).toBe(all.length);
    for (const [i, endpointId] of [a, b, s, f].entries()) {
      expect(byReceiver[i]![0]).toBe(firstAttemptId(deliveryOf[endpointId]!));
      const attempts = await attemptsOf(h.tw.pool, endpointId);
      expect(attempts.map((x) => x.id)).toEqual(byReceiver[i]);
    }
    expect((await attemptsOf(h.tw.pool, s)).map((x) => [x.status_code, x.error])).toEqual([[200, null]]);
    expect((await attemptsOf(h.tw.pool, f)).map((x) => x.status_code)).toEqual([500, 500, 200]);
  });
});
