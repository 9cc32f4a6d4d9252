import { condition, log, proxyActivities, proxyLocalActivities, setHandler } from '@temporalio/workflow';
import {
  predecessorDoneSignal,
  type DeliverEventInput,
  type DeliveryActivities,
  type LadderResult,
  type ParcelLaneInput,
} from '../core/delivery-contract';
import { formatDuration } from '../core/durations';

/**
 * Order per parcel, the workflow's side (endpoint ordering 'parcel'). Before attempt 1 of an ordered ladder,
 * checkParcelLane reads the lane: the automatic delivery to this endpoint of the parcel's event just before this
 * one. While that delivery is still running, the ladder waits on a condition, woken by the `predecessorDone`
 * signal its workflow sends when its own ladder for the endpoint ends (releaseParcelSuccessor), with a durable
 * timer as the fallback: the lane is read again after it, so a lost signal, an outage or an endpoint removed
 * (its waiters see it and go on, to be skipped) only delays. Waits point to lower sequences only, so a chain of
 * waiting events unwinds from its head and never deadlocks. Each event stays its own workflow.
 */

/** Re-reads of the lane without a signal: doubling from the first, at most RECHECK_MAX_MS apart... */
const RECHECK_INITIAL_MS = 1_000;
const RECHECK_MAX_MS = 30_000;
/**
 * ...and LONG_WAIT_RECHECK_MS apart once the ladder has waited LONG_WAIT_MS: a parcel's events queued behind a
 * failing head may wait for its whole ladder, several times over, and each re-read adds history events.
 */
const LONG_WAIT_MS = 3_600_000;
const LONG_WAIT_RECHECK_MS = 300_000;

// An outage of our database keeps the ladder reading (never skipping) the lane.
const CHECK = { startToCloseTimeout: '15s', retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s' } } as const;
// Best effort: past these the successor's own re-read finds the lane clear.
const RELEASE = {
  startToCloseTimeout: '15s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s', maximumAttempts: 5 },
} as const;

const regular = { check: proxyActivities<DeliveryActivities>(CHECK), release: proxyActivities<DeliveryActivities>(RELEASE) };
// A one-ladder workflow (attempt kind 'local') runs both steps inside its workflow task, as it does its attempts:
// no trip through matching between the predecessor's end and the successor's post. A fan-out keeps regular
// activities, for the reason core/delivery-policy.ts attemptKindFor gives.
const local = { check: proxyLocalActivities<DeliveryActivities>(CHECK), release: proxyLocalActivities<DeliveryActivities>(RELEASE) };

function nextRecheckMs(previousMs: number, waitedMs: number): number {
  return waitedMs >= LONG_WAIT_MS ? LONG_WAIT_RECHECK_MS : Math.min(previousMs * 2, RECHECK_MAX_MS);
}

export class ParcelLanes {
  /** `<eventId> <endpointId>` of the predecessors whose ladders said they ended. */
  private readonly done = new Set<string>();

  constructor(private readonly input: DeliverEventInput) {
    if (input.parcelOrder) {
      setHandler(predecessorDoneSignal, ({ eventId, endpointId }) => {
        this.done.add(`${eventId} ${endpointId}`);
      });
    }
  }

  private get steps() {
    return this.input.attemptKind === 'local' ? local : regular;
  }

  private lane(endpointId: string): ParcelLaneInput | undefined {
    const order = this.input.parcelOrder;
    const deliveryId = this.input.deliveryIds[endpointId];
    if (!order || deliveryId === undefined || !order.endpointIds.includes(endpointId)) return undefined;
    const { eventId, accountId, livemode } = this.input;
    return { endpointId, deliveryId, eventId, accountId, livemode, parcelId: order.parcelId, sequence: order.sequence };
  }

  /** Runs the ladder in its turn: an unordered one at once, an ordered one after its predecessor, then wakes the next. */
  run(endpointId: string, ladder: () => Promise<LadderResult>): Promise<LadderResult> {
    const lane = this.lane(endpointId);
    if (!lane) return ladder();
    return this.runInTurn(lane, ladder);
  }

  private async runInTurn(lane: ParcelLaneInput, ladder: () => Promise<LadderResult>): Promise<LadderResult> {
    await this.waitTurn(lane);
    const result = await ladder();
    try {
      await this.steps.release.releaseParcelSuccessor(lane);
    } catch (err) {
      log.warn('could not signal the next delivery of the parcel; it finds out on its next check', { ...lane, err });
    }
    return result;
  }

  private async waitTurn(lane: ParcelLaneInput): Promise<void> {
    const since = Date.now();
    let recheckMs = RECHECK_INITIAL_MS;
    for (;;) {
      const { waitFor } = await this.steps.check.checkParcelLane(lane);
      if (waitFor === null) return;
      const key = `${waitFor.eventId} ${lane.endpointId}`;
      const summary =
        `waiting for ${waitFor.eventId} (parcel ${lane.parcelId}, sequence ${waitFor.sequence}) ` +
        `before attempt 1 to ${lane.endpointId}; checking again in ${formatDuration(recheckMs)}`;
      if (await condition(() => this.done.has(key), recheckMs, { summary })) return;
      recheckMs = nextRecheckMs(recheckMs, Date.now() - since);
    }
  }
}
