import { condition, log, proxyActivities, proxyLocalActivities, setHandler } from '@temporalio/workflow';
import {
  predecessorDoneSignal,
  type DeliverEventInput,
  type DeliveryActivities,
  type LadderResult,
  type ParcelLaneInput,
} from '../core/delivery-contract';
import {
  localAttempts,
  PARCEL_LANE_CHECK,
  PARCEL_LANE_LONG_WAIT_MS,
  PARCEL_LANE_LONG_WAIT_RECHECK_MS,
  PARCEL_LANE_RECHECK_INITIAL_MS,
  PARCEL_LANE_RECHECK_MAX_MS,
  PARCEL_LANE_RELEASE,
} from '../core/delivery-policy';
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

const regular = {
  check: proxyActivities<DeliveryActivities>(PARCEL_LANE_CHECK),
  release: proxyActivities<DeliveryActivities>(PARCEL_LANE_RELEASE),
};
// A one-ladder workflow runs both steps inside its workflow task, as it does its attempts: no trip through
// matching between the predecessor's end and the successor's post. A fan-out keeps regular activities, for the
// reason core/delivery-policy.ts localAttempts gives.
const local = {
  check: proxyLocalActivities<DeliveryActivities>(PARCEL_LANE_CHECK),
  release: proxyLocalActivities<DeliveryActivities>(PARCEL_LANE_RELEASE),
};

function nextRecheckMs(previousMs: number, waitedMs: number): number {
  return waitedMs >= PARCEL_LANE_LONG_WAIT_MS ? PARCEL_LANE_LONG_WAIT_RECHECK_MS : Math.min(previousMs * 2, PARCEL_LANE_RECHECK_MAX_MS);
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
    return localAttempts(this.input.endpointIds.length) ? local : regular;
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
    let recheckMs = PARCEL_LANE_RECHECK_INITIAL_MS;
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
