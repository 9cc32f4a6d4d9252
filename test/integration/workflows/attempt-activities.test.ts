import type { temporal } from '@temporalio/proto';
import { describe, expect, it } from 'vitest';
import { publishEvent } from '../../../src/domain/events';
import { createEndpoint, deliveryResult, parcel } from '../../helpers/delivery';
import { testConfig } from '../../helpers/env';
import { createAccount } from '../../helpers/fixtures';
import { useDeliveryHarness, type DeliveryHarness } from '../../helpers/harness';
import { waitFor } from '../../helpers/wait';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/** The patches a history's workflow recorded (their marker events). */
function patchMarkers(events: HistoryEvent[]): string[] {
  return events
    .filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_patch')
    .map((e) => {
      const payload = Object.values(e.markerRecordedEventAttributes?.details ?? {})[0]?.payloads?.[0]?.data;
      return payload ? (JSON.parse(Buffer.from(payload).toString()) as { id: string }).id : '?';
    });
}

/** The attempts in a history, by how they ran: scheduled activities of signAndPost, or local-activity markers. */
function attemptEvents(events: HistoryEvent[]): { activities: number; markers: number } {
  return {
    activities: events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'signAndPost')
      .length,
    markers: events.filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity').length,
  };
}

async function deliverTo(h: DeliveryHarness, urls: string[]): Promise<{ events: HistoryEvent[]; outcomes: string[] }> {
  const accountId = await createAccount(h.tw.pool);
  // The receiver answers 200 on every path it was not scripted for.
  for (const url of urls) await createEndpoint(h.tw.pool, { accountId, url });
  const published = await publishEvent(
    { pool: h.tw.pool },
    { accountId, livemode: false, type: 'parcel.created', data: { parcel: parcel() } },
  );
  const result = (await deliveryResult(h.tw.client, published.event.id)) as { endpoints: { outcome: string }[] };
  const history = await h.tw.client.workflow.getHandle(published.workflowId as string).fetchHistory();
  return { events: history.events ?? [], outcomes: result.endpoints.map((e) => e.outcome) };
}

/**
 * Every attempt a workflow makes is a regular activity (src/workflows/deliver-event.ts ATTEMPTS_AS_ACTIVITIES): a
 * receiver slow to answer holds an activity slot, not the workflow task. A one-endpoint workflow of an earlier
 * release made them as local activities; its recorded histories still replay (replay.test.ts).
 */
describe('delivery: the attempts a workflow makes are regular activities', () => {
  const h = useDeliveryHarness(testConfig({ DELIVERY_RETRY_DELAYS: '50ms', DELIVERY_TIMEOUT: '2s' }));
  let n = 0;
  const url = () => `${h.receiver.url}/kind-${n++}`;

  it("runs a one-endpoint delivery's attempt 2 as a regular activity, under the patch marker", async () => {
    // Attempt 1 is made by the dispatcher before the start (early-attempt.test.ts); it fails here.
    const target = url();
    h.receiver.script(new URL(target).pathname, (i) => (i === 0 ? { status: 500 } : { status: 200 }));
    const { events, outcomes } = await deliverTo(h, [target]);
    expect(outcomes).toEqual(['delivered']);
    expect(attemptEvents(events)).toEqual({ activities: 1, markers: 0 });
    expect(patchMarkers(events)).toEqual(['attempts-as-activities']);
  });

  it('holds no workflow task while the receiver answers an attempt', async () => {
    const target = url();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    h.receiver.script(new URL(target).pathname, (i) => (i === 0 ? { status: 500 } : { status: 200, until: held }));
    const accountId = await createAccount(h.tw.pool);
    await createEndpoint(h.tw.pool, { accountId, url: target });
    const published = await publishEvent(
      { pool: h.tw.pool },
      { accountId, livemode: false, type: 'parcel.created', data: { parcel: parcel() } },
    );
    const handle = h.tw.client.workflow.getHandle(published.workflowId as string);
    try {
      await waitFor(() => h.receiver.at(new URL(target).pathname).length === 2, { what: 'attempt 2 held' });
      // A local attempt would show here as the workflow task still running, for as long as the post is held.
      const pending = await waitFor(
        async () => {
          const { raw } = await handle.describe();
          return raw.pendingActivities?.length === 1 ? raw : undefined;
        },
        { what: 'attempt 2 pending as an activity' },
      );
      expect(pending.pendingWorkflowTask ?? null).toBeNull();
    } finally {
      release();
    }
    expect(await deliveryResult(h.tw.client, published.event.id)).toMatchObject({
      endpoints: [{ outcome: 'delivered', attempts: 2 }],
    });
  });

  it("runs a two-endpoint delivery's attempts 2 on regular activities: one scheduled per endpoint, no marker", async () => {
    const targets = [url(), url()];
    for (const target of targets)
      h.receiver.script(new URL(target).pathname, (i) => (i === 0 ? { status: 500 } : { status: 200 }));
    const { events, outcomes } = await deliverTo(h, targets);
    expect(outcomes).toEqual(['delivered', 'delivered']);
    expect(attemptEvents(events)).toEqual({ activities: 2, markers: 0 });
  });
});
