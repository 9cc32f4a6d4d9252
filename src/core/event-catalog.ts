/** The event kinds merchants subscribe to. Their bodies' shapes are in ./event-schemas.ts. */
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

/** When each kind fires, one sentence each: the event catalog's page, the docs and OpenAPI say this. */
export const EVENT_FIRES_WHEN: Record<EventType, string> = {
  'parcel.created': 'A parcel was booked.',
  'parcel.awaiting_dropoff': 'The parcel waits for the merchant to drop it off.',
  'parcel.in_transit': 'The parcel is collected and moving.',
  'parcel.at_pickup_station': 'The parcel has arrived at the pickup station and the customer has their PIN.',
  'parcel.delivered': 'The customer collected the parcel.',
  'parcel.returned': 'The parcel was not collected in time.',
  'parcel.cancelled': 'The parcel was cancelled.',
  'cod.settled': 'Cash was collected on delivery and credited to the wallet.',
};

/** Parcel status carried by each parcel event (the kind's name in capitals). */
export const PARCEL_STATUS_BY_EVENT: Record<Exclude<EventType, 'cod.settled'>, string> = {
  'parcel.created': 'CREATED',
  'parcel.awaiting_dropoff': 'AWAITING_DROPOFF',
  'parcel.in_transit': 'IN_TRANSIT',
  'parcel.at_pickup_station': 'AT_PICKUP_STATION',
  'parcel.delivered': 'DELIVERED',
  'parcel.returned': 'RETURNED',
  'parcel.cancelled': 'CANCELLED',
};
