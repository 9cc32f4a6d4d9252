import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import {
  predecessorDoneSignal,
  WORKFLOW_ID,
  type ParcelLaneCheck,
  type ParcelLaneInput,
} from '../core/delivery-contract';
import { checkLane, waitingSuccessor } from '../db/parcel-lanes';
import type { Pool } from '../db/pool';

/**
 * Order per parcel (endpoint ordering 'parcel'): event n+1 of a parcel is posted to the endpoint only once the
 * delivery of event n to it has ended (succeeded, failed, skipped). The workflow side is workflows/parcel-order.ts;
 * this is what its activities do: read the lane before attempt 1, and wake the next waiter when a ladder ends.
 */

/** Whether the delivery must wait, and for which event (an endpoint removed, disabled or unordered: go). */
export function checkParcelLane(pool: Pool, input: ParcelLaneInput): Promise<ParcelLaneCheck> {
  return checkLane(pool, input);
}

/**
 * Signals the lane's next ordered delivery that this one has ended. Best effort: a successor whose workflow is
 * not started yet (still in the outbox) or already over needs no signal, since its own check reads the lane;
 * a signal lost otherwise costs the waiter its next re-check, never an inversion.
 */
export async function releaseParcelSuccessor(
  deps: { pool: Pool; temporal: Client },
  input: ParcelLaneInput,
): Promise<string | null> {
  const successor = await waitingSuccessor(deps.pool, input);
  if (successor === null) return null;
  try {
    await deps.temporal.workflow
      .getHandle(WORKFLOW_ID.deliverEvent(successor))
      .signal(predecessorDoneSignal, { eventId: input.eventId, endpointId: input.endpointId });
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) throw err;
  }
  return successor;
}
