/**
 * Shapes of what the service posts, as plain TypeScript: the kit has no runtime dependency, so it declares them
 * rather than deriving them. The engine checks in a type-level test that each of these is exactly the shape its
 * event schemas define, in every API version, so the two cannot drift apart.
 *
 * An endpoint receives its events in the API version it is pinned to (its `api_version`, sent with each delivery
 * as the `Service-Version` header). `ParcelEvent` is the newest version's union; each version has its own union,
 * `ParcelEvent_2026_12_01`, `ParcelEvent_2026_11_21`, and `ParcelEventByVersion` maps a version to it.
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

/** The parcel a settlement is about (`cod.settled`'s `data.parcel`). */
export interface ParcelReference {
  /** Parcel identifier (UUID-like). */
  id: string;
  /** Human-facing parcel reference. */
  parcel_number: string;
}

/** The body of `cod.settled`: cash collected on delivery and credited to the wallet. */
export interface CodSettlement {
  /** `cods_...` */
  id: string;
  /** Amount credited, in currency units. */
  amount: number;
  currency: string;
  /** Unix seconds when the cash was credited. */
  settled_at: number;
}

/** `cod.settled`'s `data.cod_settlement` in version 2026-11-21: the settlement naming its parcel itself. */
export interface CodSettlementWithParcel {
  /** `cods_...` */
  id: string;
  /** The id of the parcel whose cash was collected. */
  parcel_id: string;
  /** That parcel's human-facing reference. */
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
   * On every event about a parcel (its parcel events and its `cod.settled`): 1, 2, 3 ... per parcel, in the order
   * the events were published, without gaps. An event whose sequence is not above the last one you applied for
   * its parcel is a stale state: drop it. Absent on test events.
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
/** Cash was collected on delivery and credited to the wallet; `data.parcel` names the parcel. */
export type CodSettledEvent = EventOf<'cod.settled', { parcel: ParcelReference; cod_settlement: CodSettlement }>;
/** `cod.settled` in version 2026-11-21: the parcel named inside `data.cod_settlement`. */
export type CodSettledEvent_2026_11_21 = EventOf<'cod.settled', { cod_settlement: CodSettlementWithParcel }>;

/**
 * Every event the service posts in version 2026-12-01 (the newest): a closed union discriminated on `type`, so
 * `switch (event.type)` or `if (event.type === 'cod.settled')` narrows `data` to that kind's shape.
 */
export type ParcelEvent_2026_12_01 =
  | ParcelCreatedEvent
  | ParcelAwaitingDropoffEvent
  | ParcelInTransitEvent
  | ParcelAtPickupStationEvent
  | ParcelDeliveredEvent
  | ParcelReturnedEvent
  | ParcelCancelledEvent
  | CodSettledEvent;

/** Every event the service posts in version 2026-11-21: as 2026-12-01, but `cod.settled` names its parcel inside its settlement. */
export type ParcelEvent_2026_11_21 = Exclude<ParcelEvent_2026_12_01, CodSettledEvent> | CodSettledEvent_2026_11_21;

/** Every event in the newest API version. */
export type ParcelEvent = ParcelEvent_2026_12_01;

/** Each API version's event union, by the version's name (the `Service-Version` header of a delivery). */
export interface ParcelEventByVersion {
  '2026-12-01': ParcelEvent_2026_12_01;
  '2026-11-21': ParcelEvent_2026_11_21;
}

/** The API versions, named by date. */
export type ApiVersion = keyof ParcelEventByVersion;

/** The eight event kinds. */
export type EventType = ParcelEvent['type'];

/** The event of one kind, e.g. `EventOfType<'parcel.delivered'>`. */
export type EventOfType<TType extends EventType> = Extract<ParcelEvent, { type: TType }>;

/** The seven events that carry `data.parcel`. */
export type ParcelStageEvent = Exclude<ParcelEvent, CodSettledEvent>;
