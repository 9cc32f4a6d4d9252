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
  CodSettledEvent,
  CodSettlement,
  EventOfType,
  EventType,
  Parcel,
  ParcelAtPickupStationEvent,
  ParcelAwaitingDropoffEvent,
  ParcelCancelledEvent,
  ParcelCreatedEvent,
  ParcelDeliveredEvent,
  ParcelEvent,
  ParcelInTransitEvent,
  ParcelReturnedEvent,
  ParcelStageEvent,
} from './types.js';
