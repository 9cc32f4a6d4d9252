/**
 * `@parcel-webhooks/receiver` (also `parcel-webhooks/receiver` from the engine's package): what a merchant needs
 * to accept the service's webhooks. Only node:crypto is used below this entry point; the example server
 * (receiver/example/) is not part of the package. Relative imports name their `.js` file so that the same
 * sources build as ES modules and as CommonJS.
 */
export {
  DEFAULT_TOLERANCE_SECONDS,
  DELIVERY_ID_HEADER,
  EVENT_TYPE_HEADER,
  SIGNATURE_HEADER,
  verifySignature,
  WebhookVerificationError,
  type RawBody,
  type SignatureHeaderValue,
  type VerificationFailureReason,
  type VerifiedSignature,
  type VerifyOptions,
} from './verify.js';
export { constructEvent, constructEventWithSignature, type ConstructedEvent } from './construct-event.js';
export type {
  ApiVersion,
  CodSettledEvent,
  CodSettledEvent_2026_11_21,
  CodSettlement,
  CodSettlementWithParcel,
  EventOfType,
  EventType,
  Parcel,
  ParcelAtPickupStationEvent,
  ParcelAwaitingDropoffEvent,
  ParcelCancelledEvent,
  ParcelCreatedEvent,
  ParcelDeliveredEvent,
  ParcelEvent,
  ParcelEvent_2026_11_21,
  ParcelEvent_2026_12_01,
  ParcelEventByVersion,
  ParcelInTransitEvent,
  ParcelReference,
  ParcelReturnedEvent,
  ParcelStageEvent,
} from './types.js';
