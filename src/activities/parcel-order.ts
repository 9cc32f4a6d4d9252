import type { Client } from '@temporalio/client';
import type { ParcelLaneCheck, ParcelLaneInput } from '../core/delivery-contract';
import type { Pool } from '../domain/database';
import { checkParcelLane, releaseParcelSuccessor } from '../domain/parcel-order';

export interface ParcelOrderDeps {
  pool: Pool;
  /** Needed by releaseParcelSuccessor only: it signals the successor's workflow. */
  temporal?: Client;
}

/** The ordered ladder's two steps (workflows/parcel-order.ts): the lane read before attempt 1, the wake-up after. */
export function createParcelOrderActivities(deps: ParcelOrderDeps) {
  return {
    async checkParcelLane(input: ParcelLaneInput): Promise<ParcelLaneCheck> {
      return checkParcelLane(deps.pool, input);
    },
    async releaseParcelSuccessor(input: ParcelLaneInput): Promise<void> {
      if (!deps.temporal) throw new Error('releaseParcelSuccessor needs a Temporal client in the activity deps');
      await releaseParcelSuccessor({ pool: deps.pool, temporal: deps.temporal }, input);
    },
  };
}
