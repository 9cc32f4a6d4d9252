/**
 * Shapes of what the service posts. Declared here rather than imported from core/ so the
 * receiver kit stays a leaf: merchants install it without pulling in the engine.
 */

/** The event kinds. Kept open-ended (`string & {}`) so a kind added later still type-checks in an older receiver. */
export type KnownEventType =
  | 'parcel.created'
  | 'parcel.awaiting_dropoff'
  | 'parcel.in_transit'
  | 'parcel.at_pickup_station'
  | 'parcel.delivered'
  | 'parcel.returned'
  | 'parcel.cancelled'
  | 'cod.settled';

export type EventType = KnownEventType | (string & {});

/** The parcel as carried in an event. Its value sets are open, so they stay strings. */
export interface Parcel {
  id: string;
  parcel_number: string;
  tracking_number: string;
  status: string;
  payment_status: string;
  total_fee: number;
  currency: string;
  description: string;
  package_size: string;
  recipient_name: string;
  pickup_run_id: string;
  [field: string]: unknown;
}

/** The body of `cod.settled`: what the service sends. */
export interface CodSettlement {
  id: string;
  parcel_id: string;
  parcel_number: string;
  amount: number;
  currency: string;
  settled_at: number | string;
  [field: string]: unknown;
}

/** The body posted to a webhook endpoint. */
export interface WebhookEvent<TData extends object = Record<string, unknown>> {
  /** `evt_...`, repeated on every retry of the same event: the key to deduplicate on. */
  id: string;
  object: 'event';
  type: EventType;
  /** Unix seconds when the event happened, not when this attempt was sent. */
  created: number;
  data: TData;
  /**
   * On every event about a parcel (`data.parcel.id`): 1, 2, 3 ... per parcel, in the order the events were
   * published. An event whose sequence is not above the last one you applied for its parcel is a stale state:
   * drop it. Absent on events without a parcel (`cod.settled`).
   */
  sequence?: number;
}

export type ParcelEvent = WebhookEvent<{ parcel: Parcel }>;
export type CodSettledEvent = WebhookEvent<{ cod_settlement: CodSettlement }>;
