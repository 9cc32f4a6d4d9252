import { condition, log, proxyActivities, proxyLocalActivities, setHandler } from '@temporalio/workflow';
import {
  predecessorDoneSignal,
  type DeliverEventInput,
  type DeliveryActivities,
  type LadderResult,
  type ParcelLaneInput,
  type ParcelWaitState,
} from '../core/delivery-contract';
import {
  deliveryExpiresAtMs,
  localAttempts,
  PARCEL_LANE_CHECK,
  PARCEL_LANE_LONG_WAIT_MS,
  PARCEL_LANE_LONG_WAIT_RECHECK_MS,
  PARCEL_LANE_RECHECK_INITIAL_MS,
  PARCEL_LANE_RECHECK_MAX_MS,
  PARCEL_LANE_RECHECKS_PER_RUN,
  PARCEL_LANE_RELEASE,
} from '../core/delivery-policy';
import { formatDuration } from '../core/durations';
import { hasExpired, withinMaxAge } from './max-age';

/**
 * Order per parcel, the workflow's side (endpoint ordering 'parcel'). Before attempt 1 of an ordered ladder,
 * checkParcelLane reads the lane: the automatic delivery to this endpoint of the parcel's event just before this
 * one. While that delivery is still running, the ladder waits on a condition, woken by the `predecessorDone`
 * signal its workflow sends when its own ladder for the endpoint ends (releaseParcelSuccessor), with a durable
 * timer as the fallback: the lane is read again after it, so a lost signal, an outage or an endpoint removed
 * (its waiters see it and go on, to be skipped) only delays. Waits point to lower sequences only, so a chain of
 * waiting events unwinds from its head and never deadlocks. Each event stays its own workflow.
 *
 * A wait ends at the latest at the delivery's max age (its ladder then gives the delivery up before attempt 1). A
 * wait that re-reads its lane more than `parcelRechecksPerRun` times parks its ladder once the workflow's other
 * ladders have ended or are parked too, and the workflow continues as new with the waits' state
 * (DeliverEventInput.parcelWaits): a wait of days never grows one run's history past that bound.
 */

/** A ladder that stopped waiting for its turn at the re-check bound: the next run of the workflow takes it over. */
export interface ParkedLadder {
  endpointId: string;
  parked: ParcelWaitState;
}

const regular = {
  check: proxyActivities<DeliveryActivities>(PARCEL_LANE_CHECK),
  release: proxyActivities<DeliveryActivities>(PARCEL_LANE_RELEASE),
};
// A one-ladder workflow runs both steps (short reads and writes of our database) inside its workflow task: no
// trip through matching between the predecessor's end and the successor's post. A fan-out keeps regular
// activities, for the reason core/delivery-policy.ts localAttempts gives.
const local = {
  check: proxyLocalActivities<DeliveryActivities>(PARCEL_LANE_CHECK),
  release: proxyLocalActivities<DeliveryActivities>(PARCEL_LANE_RELEASE),
};

function nextRecheckMs(previousMs: number, waitedMs: number): number {
  return waitedMs >= PARCEL_LANE_LONG_WAIT_MS
    ? PARCEL_LANE_LONG_WAIT_RECHECK_MS
    : Math.min(previousMs * 2, PARCEL_LANE_RECHECK_MAX_MS);
}

export class ParcelLanes {
  /** `<eventId> <endpointId>` of the predecessors whose ladders said they ended. */
  private readonly done = new Set<string>();
  /** Ladders of this run that ended or parked. */
  private settled = 0;
  /** Ordered ladders waiting past the re-check bound, ready to park. */
  private readonly overBound = new Set<string>();

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
  async run(endpointId: string, ladder: () => Promise<LadderResult>): Promise<LadderResult | ParkedLadder> {
    const lane = this.lane(endpointId);
    try {
      return lane ? await this.runInTurn(lane, ladder) : await ladder();
    } finally {
      this.settled++;
    }
  }

  /** Every ladder of this run but `endpointId` has ended, parked, or waits past the bound too. */
  private othersAtRest(endpointId: string): boolean {
    const othersOverBound = [...this.overBound].filter((id) => id !== endpointId).length;
    return this.settled + othersOverBound >= this.input.endpointIds.length - 1;
  }

  private async runInTurn(
    lane: ParcelLaneInput,
    ladder: () => Promise<LadderResult>,
  ): Promise<LadderResult | ParkedLadder> {
    const turn = await this.waitTurn(lane);
    if (turn !== 'go') return { endpointId: lane.endpointId, parked: turn };
    const result = await ladder();
    try {
      await this.steps.release.releaseParcelSuccessor(lane);
    } catch (err) {
      log.warn('could not signal the next delivery of the parcel; it finds out on its next check', { ...lane, err });
    }
    return result;
  }

  /** 'go' once the ladder's turn has come (or its delivery expired), else the wait's state to park with. */
  private async waitTurn(lane: ParcelLaneInput): Promise<'go' | ParcelWaitState> {
    const carried = this.input.parcelWaits?.[lane.endpointId];
    const since = carried?.sinceMs ?? Date.now();
    let recheckMs = carried?.recheckMs ?? PARCEL_LANE_RECHECK_INITIAL_MS;
    const bound = this.input.parcelRechecksPerRun ?? PARCEL_LANE_RECHECKS_PER_RUN;
    const expiresAtMs = deliveryExpiresAtMs(this.input);
    try {
      for (let rechecks = 0; ; rechecks++) {
        const { waitFor } = await this.steps.check.checkParcelLane(lane);
        // Expired while waiting: the ladder gives the delivery up before its attempt 1, posting nothing.
        if (waitFor === null || hasExpired(expiresAtMs)) return 'go';
        if (rechecks >= bound) {
          this.overBound.add(lane.endpointId);
          if (this.othersAtRest(lane.endpointId)) return { sinceMs: since, recheckMs };
        }
        const key = `${waitFor.eventId} ${lane.endpointId}`;
        const timeoutMs = withinMaxAge(expiresAtMs, recheckMs);
        const summary =
          `waiting for ${waitFor.eventId} (parcel ${lane.parcelId}, sequence ${waitFor.sequence}) ` +
          `before attempt 1 to ${lane.endpointId}; checking again in ${formatDuration(timeoutMs)}` +
          (timeoutMs < recheckMs ? ' (the delivery expires then)' : '');
        if (await condition(() => this.done.has(key), timeoutMs, { summary })) return 'go';
        recheckMs = nextRecheckMs(recheckMs, Date.now() - since);
      }
    } finally {
      this.overBound.delete(lane.endpointId);
    }
  }
}
