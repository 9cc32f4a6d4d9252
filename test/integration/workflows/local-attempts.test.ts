import type { temporal } from '@temporalio/proto';
import { describe, expect, it } from 'vitest';
import { publishEvent } from '../../../src/domain/events';
import { createEndpoint, deliveryResult, parcel } from '../../helpers/delivery';
import { testConfig } from '../../helpers/env';
import { createAccount } from '../../helpers/fixtures';
import { useDeliveryHarness, type DeliveryHarness } from '../../helpers/harness';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

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
 * A one-endpoint delivery runs its attempts as local activities and a fan-out keeps regular activities
 * (src/core/delivery-policy.ts localAttempts: local activities side by side in one workflow can replay in another
 * order than they ran).
 */
describe('delivery: how attempts run follows the number of ladders', () => {
  const h = useDeliveryHarness(testConfig({ DELIVERY_RETRY_DELAYS: '50ms', DELIVERY_TIMEOUT: '2s' }));
  let n = 0;
  const url = () => `${h.receiver.url}/kind-${n++}`;

  it("runs a one-endpoint delivery's attempt 2 as a local attempt: one marker, no activity", async () => {
    // Attempt 1 is made by the dispatcher before the start (early-attempt.test.ts); it fails here.
    const target = url();
    h.receiver.script(new URL(target).pathname, (i) => (i === 0 ? { status: 500 } : { status: 200 }));
    const { events, outcomes } = await deliverTo(h, [target]);
    expect(outcomes).toEqual(['delivered']);
    expect(attemptEvents(events)).toEqual({ activities: 0, markers: 1 });
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
