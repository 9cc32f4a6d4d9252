import Type, { type Static, type TSchema } from 'typebox';
import { EVENT_FIRES_WHEN, EVENT_TYPES, PARCEL_STATUS_BY_EVENT, type EventType } from './event-catalog';

/**
 * The one source for what an event's body looks like: the envelope every event shares and the
 * `data` each kind carries. From these schemas come publish validation (domain/events.ts), the `webhooks` section
 * of the OpenAPI document, the event catalog of the developers page and of docs/events.md, and, through a
 * type-level test, the receiver kit's `ParcelEvent` types (receiver/types.ts declares them as plain TypeScript,
 * because the kit has no runtime dependency; test/unit/receiver/event-types.test.ts fails when they drift).
 *
 * The parcel and the settlement are open objects: fields not named here are allowed through, so the
 * parcel system can add one without breaking publishing. Value sets (status, payment_status, package_size) are
 * open as well, and stay strings.
 */

const UNIX_SECONDS = 'Unix time in seconds.';

/**
 * The one mark of a personal field (a value about a person): erasure (domain/parcel-erasure.ts) replaces exactly the
 * fields so marked, and the OpenAPI document shows the mark as an extension keyword.
 */
export const PERSONAL_KEYWORD = 'x-personal';
const PERSONAL = { [PERSONAL_KEYWORD]: true } as const;

export const ParcelSchema = Type.Object(
  {
    id: Type.String({ minLength: 1, description: 'Parcel identifier (UUID-like).' }),
    parcel_number: Type.String({ description: 'Human-facing parcel reference.' }),
    tracking_number: Type.String({ description: 'Tracking reference.' }),
    status: Type.String({
      description: 'Upper-case status word: the stage the event names, e.g. DELIVERED for parcel.delivered.',
    }),
    payment_status: Type.String({
      description: 'Upper-case word, e.g. PAID, or PENDING until cash on delivery is collected.',
    }),
    total_fee: Type.Number({ description: 'Amount in currency units.' }),
    currency: Type.String({ description: 'Currency code (ISO 4217).' }),
    description: Type.String({
      description: 'Free text describing the contents, written by the merchant.',
      ...PERSONAL,
    }),
    package_size: Type.String({ description: 'Size code, e.g. S, M or L.' }),
    recipient_name: Type.String({ description: 'Name of the recipient.', ...PERSONAL }),
    pickup_run_id: Type.String({ description: 'Identifier of the pickup run (UUID-like).' }),
  },
  { title: 'Parcel', description: 'The parcel as carried in an event.', additionalProperties: true },
);

/** The parcel a settlement is about: enough to find it, since a settlement does not restate the parcel. */
export const ParcelReferenceSchema = Type.Object(
  {
    id: Type.String({ minLength: 1, description: 'The id of the parcel whose cash was collected.' }),
    parcel_number: Type.String({ description: "That parcel's human-facing reference." }),
  },
  { title: 'ParcelReference', description: 'The parcel a settlement is about.', additionalProperties: true },
);

export const CodSettlementSchema = Type.Object(
  {
    id: Type.String({ minLength: 1, description: 'Settlement identifier (cods_...).' }),
    amount: Type.Number({ description: 'Amount credited to the wallet, in currency units.' }),
    currency: Type.String({ description: 'Currency code (ISO 4217).' }),
    settled_at: Type.Integer({ description: `When the cash was credited. ${UNIX_SECONDS}` }),
  },
  {
    title: 'CodSettlement',
    description: 'Cash collected on delivery and credited to the wallet.',
    additionalProperties: true,
  },
);

const ParcelData = Type.Object({ parcel: ParcelSchema }, { additionalProperties: false });
const CodSettledData = Type.Object(
  { parcel: ParcelReferenceSchema, cod_settlement: CodSettlementSchema },
  { additionalProperties: false },
);

/** The envelope every kind shares, with that kind's `type` and `data`; every version keeps it. */
export function eventSchema<K extends EventType, D extends TSchema>(type: K, data: D) {
  return Type.Object(
    {
      id: Type.String({
        pattern: '^evt_',
        description: 'evt_...; the same on every retry of this event: the key to deduplicate on.',
      }),
      object: Type.Literal('event'),
      type: Type.Literal(type),
      created: Type.Integer({
        description: `When the event happened, not when this attempt was sent. ${UNIX_SECONDS}`,
      }),
      livemode: Type.Optional(Type.Boolean({ description: 'true for live mode, false for test mode.' })),
      data: data,
      sequence: Type.Optional(
        Type.Integer({
          minimum: 1,
          description:
            'On every event about a parcel (its parcel events and its settlement): 1, 2, 3 ... per parcel, in publish order, without gaps. An event whose sequence is not above the last one applied for its parcel is a stale state. Absent on test events.',
        }),
      ),
    },
    { title: type, description: EVENT_FIRES_WHEN[type], additionalProperties: false },
  );
}

/** Each kind's whole body in the newest version (core/versions/), as stored and as posted to an endpoint on it. */
export const EVENT_SCHEMAS = {
  'parcel.created': eventSchema('parcel.created', ParcelData),
  'parcel.awaiting_dropoff': eventSchema('parcel.awaiting_dropoff', ParcelData),
  'parcel.in_transit': eventSchema('parcel.in_transit', ParcelData),
  'parcel.at_pickup_station': eventSchema('parcel.at_pickup_station', ParcelData),
  'parcel.delivered': eventSchema('parcel.delivered', ParcelData),
  'parcel.returned': eventSchema('parcel.returned', ParcelData),
  'parcel.cancelled': eventSchema('parcel.cancelled', ParcelData),
  'cod.settled': eventSchema('cod.settled', CodSettledData),
} as const satisfies Record<EventType, TSchema>;

/** Each kind's body as a TypeScript type, derived once per kind. */
type EventBodies = { [K in EventType]: Static<(typeof EVENT_SCHEMAS)[K]> };
export type EventBody<K extends EventType = EventType> = EventBodies[K];

/** What a publisher sends as `data` for a kind: the schema publishing checks. */
export function eventDataSchema(type: EventType): TSchema {
  return type === 'cod.settled' ? CodSettledData : ParcelData;
}

/** What a parcel looks like in the examples: the catalog and the docs show these, and a unit test checks them. */
const EXAMPLE_PARCEL: Static<typeof ParcelSchema> = {
  id: '5f0c2a8e-4b7d-4c1e-9a3f-2d6b8e1f7c40',
  parcel_number: 'PCL-104233',
  tracking_number: 'TRK8842301457KE',
  status: 'CREATED',
  payment_status: 'PENDING',
  total_fee: 350,
  currency: 'KES',
  description: 'Two cotton shirts',
  package_size: 'M',
  recipient_name: 'Amina Wanjiru',
  pickup_run_id: '9a1d3c52-7e0b-4f6a-8c2d-5b4e3f1a0d97',
};

const EXAMPLE_CREATED = 1767258000;

/** An example body of each kind, fixed so the generated docs do not change from run to run. */
export function exampleEvent<K extends EventType>(type: K): EventBody<K> {
  const paid = type === 'parcel.delivered' || type === 'cod.settled';
  // A generic K does not narrow; its value as a plain EventType does.
  const kind: EventType = type;
  const data =
    kind === 'cod.settled'
      ? {
          parcel: { id: EXAMPLE_PARCEL.id, parcel_number: EXAMPLE_PARCEL.parcel_number },
          cod_settlement: {
            id: 'cods_7c1f0a9b2d4e4f3a8b6c5d0e1f2a3b4c',
            amount: EXAMPLE_PARCEL.total_fee,
            currency: EXAMPLE_PARCEL.currency,
            settled_at: EXAMPLE_CREATED,
          },
        }
      : {
          parcel: {
            ...EXAMPLE_PARCEL,
            status: PARCEL_STATUS_BY_EVENT[kind],
            payment_status: paid ? 'PAID' : EXAMPLE_PARCEL.payment_status,
          },
        };
  const suffix = String(EVENT_TYPES.indexOf(type) + 1).padStart(2, '0');
  const body = {
    id: `evt_3kTq9vWx2mYp8rLz${suffix}`,
    object: 'event',
    type,
    created: EXAMPLE_CREATED,
    livemode: false,
    data,
  };
  // A parcel's events are numbered in publish order; the example is that parcel's event in its lifecycle's place,
  // a settlement right after its parcel's delivery.
  const sequence = type === 'cod.settled' ? EVENT_TYPES.indexOf('parcel.delivered') + 2 : EVENT_TYPES.indexOf(type) + 1;
  return { ...body, sequence } as EventBody<K>;
}

/** One kind as the catalogs show it (developers page, docs/events.md, OpenAPI): all from the schemas above. */
export interface CatalogEntry {
  type: EventType;
  firesWhen: string;
  /** What `data` carries: `data.parcel`, or `data.parcel` and `data.cod_settlement`. */
  carries: string;
  schema: TSchema;
  example: EventBody;
}

export function eventCatalog(): CatalogEntry[] {
  return EVENT_TYPES.map((type) => ({
    type,
    firesWhen: EVENT_FIRES_WHEN[type],
    carries: type === 'cod.settled' ? 'data.parcel and data.cod_settlement' : 'data.parcel',
    schema: EVENT_SCHEMAS[type],
    example: exampleEvent(type),
  }));
}

/** A personal field's path in an event body, e.g. ['data', 'parcel', 'recipient_name']. */
export type PersonalPath = readonly string[];

function personalPathsOf(schema: unknown, at: string[]): PersonalPath[] {
  const node = schema as { [PERSONAL_KEYWORD]?: unknown; properties?: Record<string, unknown> };
  if (node[PERSONAL_KEYWORD] === true) return [at];
  return Object.entries(node.properties ?? {}).flatMap(([name, child]) => personalPathsOf(child, [...at, name]));
}

/** Each kind's personal fields, read from the schemas' mark: no second list of field names. */
export const PERSONAL_PATHS: Record<EventType, PersonalPath[]> = Object.fromEntries(
  EVENT_TYPES.map((type) => [type, personalPathsOf(EVENT_SCHEMAS[type], [])]),
) as Record<EventType, PersonalPath[]>;
