import type { Static } from 'typebox';
import type { EventType as EngineEventType } from '../../../src/core/event-catalog';
import type {
  CodSettlementSchema,
  EventBody,
  ParcelReferenceSchema,
  ParcelSchema,
} from '../../../src/core/event-schemas';
import type { CodSettledDataBefore } from '../../../src/core/versions/2026-12-01';
import type {
  CodSettledEvent_2026_11_21,
  CodSettlement,
  EventOfType,
  EventType,
  Parcel,
  ParcelEvent,
  ParcelEvent_2026_12_01,
  ParcelReference,
} from '../../../src/receiver/index';
import type { SameShape } from '../../helpers/type-equality';

/**
 * The receiver kit declares its event types as plain TypeScript (it has no runtime dependency, so it cannot
 * derive them from TypeBox). These declarations fail to compile the moment a kit type and the engine's schema
 * differ in any field, optionality or kind; event-types.test.ts compiles this file, so that is a test failure,
 * not only a typecheck one.
 */

export const sameEvents: { [K in EngineEventType]: SameShape<EventBody<K>, EventOfType<K>> } = {
  'parcel.created': true,
  'parcel.awaiting_dropoff': true,
  'parcel.in_transit': true,
  'parcel.at_pickup_station': true,
  'parcel.delivered': true,
  'parcel.returned': true,
  'parcel.cancelled': true,
  'cod.settled': true,
};
export const sameParcel: SameShape<Static<typeof ParcelSchema>, Parcel> = true;
export const sameSettlement: SameShape<Static<typeof CodSettlementSchema>, CodSettlement> = true;
export const sameKinds: SameShape<EngineEventType, EventType> = true;
export const sameUnion: SameShape<EventBody, ParcelEvent> = true;
export const sameParcelReference: SameShape<Static<typeof ParcelReferenceSchema>, ParcelReference> = true;
export const newestIsParcelEvent: SameShape<ParcelEvent_2026_12_01, ParcelEvent> = true;
/** 2026-11-21's settlement, as the version that changed it declares its earlier data (src/core/versions/2026-12-01.ts). */
export const sameOldSettlement: SameShape<
  CodSettledEvent_2026_11_21['data'],
  Static<typeof CodSettledDataBefore>
> = true;
