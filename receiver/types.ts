/**
 * Shapes of what the service posts, as plain TypeScript: the kit has no runtime dependency, so it declares them
 * rather than deriving them. The engine checks in a type-level test that each of these is exactly the shape its
 * event schemas define, so the two cannot drift apart.
 */

/** The parcel as carried in an event. Its value sets (status, payment_status, package_size) are open, so they stay strings. */
export interface Parcel {
  /** Parcel identifier (UUID-like). */
  id: string;
  /** Human-facing parcel reference. */
  parcel_number: string;
  tracking_number: string;
  /** Upper-case status word: the stage the event names, e.g. `DELIVERED` for `parcel.delivered`. */
  status: string;
  /** Upper-case word, e.g. `PAID`, or `PENDING` until cash on delivery is collected. */
  payment_status: string;
  /** Amount in currency units. */
  total_fee: number;
  /** Currency code (ISO 4217). */
  currency: string;
  /** Free text written by the merchant. */
  description: string;
  /** Size code, e.g. `S`. */
  package_size: string;
  recipient_name: string;
  pickup_run_id: string;
}

/** The body of `cod.settled`: cash collected on delivery and credited to the wallet. */
export interface CodSettlement {
  /** `cods_...` */
  id: string;
  parcel_id: string;
  parcel_number: string;
  /** Amount credited, in currency units. */
  amount: number;
  currency: string;
  /** Unix seconds when the cash was credited. */
  settled_at: number;
}

/** The envelope every event shares. */
interface EventOf<TType extends string, TData> {
  /** `evt_...`, repeated on every retry of the same event: the key to deduplicate on. */
  id: string;
  object: 'event';
  type: TType;
  /** Unix seconds when the event happened, not when this attempt was sent. */
  created: number;
  /** true for live mode, false for test mode. */
  livemode?: boolean;
  data: TData;
  /**
   * On every event about a parcel (`data.parcel.id`): 1, 2, 3 ... per parcel, in the order the events were
   * published. An event whose sequence is not above the last one you applied for its parcel is a stale state:
   * drop it. Absent on events without a parcel (`cod.settled`).
   */
  sequence?: number;
}

/** A parcel was booked. */
export type ParcelCreatedEvent = EventOf<'parcel.created', { parcel: Parcel }>;
/** The parcel waits for the merchant to drop it off. */
export type ParcelAwaitingDropoffEvent = EventOf<'parcel.awaiting_dropoff', { parcel: Parcel }>;
/** The parcel is collected and moving. */
export type ParcelInTransitEvent = EventOf<'parcel.in_transit', { parcel: Parcel }>;
/** The parcel has arrived at the pickup station and the customer has their PIN. */
export type ParcelAtPickupStationEvent = EventOf<'parcel.at_pickup_station', { parcel: Parcel }>;
/** The customer collected the parcel. */
export type ParcelDeliveredEvent = EventOf<'parcel.delivered', { parcel: Parcel }>;
/** The parcel was not collected in time. */
export type ParcelReturnedEvent = EventOf<'parcel.returned', { parcel: Parcel }>;
/** The parcel was cancelled. */
export type ParcelCancelledEvent = EventOf<'parcel.cancelled', { parcel: Parcel }>;
/** Cash was collected on delivery and credited to the wallet. */
export type CodSettledEvent = EventOf<'cod.settled', { cod_settlement: CodSettlement }>;

/**
 * Every event the service posts: a closed union discriminated on `type`, so `switch (event.type)` or
 * `if (event.type === 'cod.settled')` narrows `data` to that kind's shape.
 */
export type ParcelEvent =
  | ParcelCreatedEvent
  | ParcelAwaitingDropoffEvent
  | ParcelInTransitEvent
  | ParcelAtPickupStationEvent
  | ParcelDeliveredEvent
  | ParcelReturnedEvent
  | ParcelCancelledEvent
  | CodSettledEvent;

/** The eight event kinds. */
export type EventType = ParcelEvent['type'];

/** The event of one kind, e.g. `EventOfType<'parcel.delivered'>`. */
export type EventOfType<TType extends EventType> = Extract<ParcelEvent, { type: TType }>;

/** The seven events that carry `data.parcel`. */
export type ParcelStageEvent = Exclude<ParcelEvent, CodSettledEvent>;
