import { defineSignal } from '@temporalio/workflow';

/** Messages of the endpoint supervisor, shared by the workflow and the activity that signals it. */

/** A delivery to the endpoint used all its attempts. */
export const abandonedSignal = defineSignal<[AbandonedPayload]>('abandoned');

export interface AbandonedPayload {
  eventId: string;
  attemptCount: number;
  /** The threshold the event was published with; absent in signals sent before it was carried. */
  failingThreshold?: number;
}

/** A delivery succeeded after abandonments: the streak and the failing mark are already reset in the database. */
export const deliverySucceededSignal = defineSignal<[{ eventId: string }]>('deliverySucceeded');
