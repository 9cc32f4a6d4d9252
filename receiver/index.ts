/**
 * `parcel-webhooks/receiver`: what a merchant needs to accept the service's webhooks. Only node:crypto is
 * used below this entry point; the example server (receiver/example/) is deliberately not exported.
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
} from './verify';
export { constructEvent, constructEventWithSignature, type ConstructedEvent } from './construct-event';
export type { CodSettledEvent, CodSettlement, EventType, KnownEventType, Parcel, ParcelEvent, WebhookEvent } from './types';
