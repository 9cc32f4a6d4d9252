/** Event kinds, spec 6. */
export const EVENT_TYPES = [
  'parcel.created',
  'parcel.awaiting_dropoff',
  'parcel.in_transit',
  'parcel.at_pickup_station',
  'parcel.delivered',
  'parcel.returned',
  'parcel.cancelled',
  'cod.settled',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

export function isEventType(value: unknown): value is EventType {
  return typeof value === 'string' && (EVENT_TYPES as readonly string[]).includes(value);
}

/** Parcel status carried by each parcel event (spec 2.2 shows DELIVERED; the rest follow the kind's name). */
export const PARCEL_STATUS_BY_EVENT: Record<Exclude<EventType, 'cod.settled'>, string> = {
  'parcel.created': 'CREATED',
  'parcel.awaiting_dropoff': 'AWAITING_DROPOFF',
  'parcel.in_transit': 'IN_TRANSIT',
  'parcel.at_pickup_station': 'AT_PICKUP_STATION',
  'parcel.delivered': 'DELIVERED',
  'parcel.returned': 'RETURNED',
  'parcel.cancelled': 'CANCELLED',
};
