import Type from 'typebox';
import type { EventType } from '../event-catalog';
import type { ApiVersion, VersionedEvent } from './types';

/**
 * A settlement is a parcel event: it names its parcel in `data.parcel` `{ id, parcel_number }`, as every parcel
 * event does, instead of inside `data.cod_settlement`. Receivers then find the parcel of any event in one place,
 * and the settlement takes its place in the parcel's numbered, ordered lane. Breaking for a receiver reading
 * `data.cod_settlement.parcel_id`, hence a version.
 */

/** The settlement as the version before carried it: its parcel named inside it. */
const SettlementWithParcel = Type.Object(
  {
    id: Type.String({ minLength: 1, description: 'Settlement identifier (cods_...).' }),
    parcel_id: Type.String({ description: 'The id of the parcel whose cash was collected.' }),
    parcel_number: Type.String({ description: "That parcel's human-facing reference." }),
    amount: Type.Number({ description: 'Amount credited to the wallet, in currency units.' }),
    currency: Type.String({ description: 'Currency code (ISO 4217).' }),
    settled_at: Type.Integer({ description: 'When the cash was credited. Unix time in seconds.' }),
  },
  {
    title: 'CodSettlement',
    description: 'Cash collected on delivery and credited to the wallet, naming its parcel.',
    additionalProperties: true,
  },
);

/** `cod.settled`'s data in the version before: the receiver kit's types are checked against it. */
export const CodSettledDataBefore = Type.Object(
  { cod_settlement: SettlementWithParcel },
  { additionalProperties: false },
);

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** data.parcel folded back into the settlement, its own fields first as the version before ordered them. */
function settlementToPrevious(event: VersionedEvent): VersionedEvent {
  const { parcel, cod_settlement: settlement, ...rest } = event.data;
  if (!isObject(parcel) || !isObject(settlement)) return event;
  const { id, amount, currency, settled_at: settledAt, ...extra } = settlement;
  const previous = {
    id,
    parcel_id: parcel.id,
    parcel_number: parcel.parcel_number,
    amount,
    currency,
    settled_at: settledAt,
    ...extra,
  };
  return { ...event, data: { ...rest, cod_settlement: previous } };
}

export const VERSION_2026_12_01: ApiVersion = {
  name: '2026-12-01',
  why: 'A settlement names its parcel in data.parcel, as every parcel event does, so every event about a parcel is found, numbered and ordered the same way.',
  changes: [
    {
      type: 'cod.settled',
      summary:
        'data.parcel { id, parcel_number } names the parcel; data.cod_settlement no longer carries parcel_id and parcel_number.',
    },
  ],
  sunset: null,
  toPrevious: (event) => (event.type === 'cod.settled' ? settlementToPrevious(event) : event),
  fromPrevious: (type: EventType, data) => {
    const settlement = data.cod_settlement;
    if (type !== 'cod.settled' || data.parcel !== undefined || !isObject(settlement)) return data;
    const { parcel_id: parcelId, parcel_number: parcelNumber, ...rest } = settlement;
    return { ...data, parcel: { id: parcelId, parcel_number: parcelNumber }, cod_settlement: rest };
  },
  previousDataSchemas: {
    'cod.settled': CodSettledDataBefore,
  },
};
