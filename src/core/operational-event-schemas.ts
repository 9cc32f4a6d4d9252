import Type, { type Static, type TSchema } from 'typebox';

/**
 * Operational events: what the service tells the parcel system (its operational webhooks, never a merchant)
 * about a merchant's endpoints and deliveries. They are stored and delivered as any event (one engine), but
 * their kinds are not merchant kinds: the merchant publish API refuses them (core/event-catalog.ts lists the
 * merchant kinds only), and only the database publishes them (migration operational-webhooks,
 * `publish_operational_event`, in the transaction of the change it reports). These schemas are the body's shape;
 * docs/events.md documents each kind from them, and the integration tests check every body received against them.
 */

export const OPERATIONAL_EVENT_TYPES = [
  'endpoint.failing',
  'endpoint.recovered',
  'endpoint.disabled',
  'endpoint.paused',
  'endpoint.resumed',
  'delivery.abandoned',
  'delivery.expired',
] as const;

export type OperationalEventType = (typeof OPERATIONAL_EVENT_TYPES)[number];

export function isOperationalEventType(value: unknown): value is OperationalEventType {
  return typeof value === 'string' && (OPERATIONAL_EVENT_TYPES as readonly string[]).includes(value);
}

/** The kinds whose body carries `data.delivery`. */
export const OPERATIONAL_DELIVERY_EVENT_TYPES: readonly OperationalEventType[] = [
  'delivery.abandoned',
  'delivery.expired',
];

export const OPERATIONAL_EVENT_FIRES_WHEN: Record<OperationalEventType, string> = {
  'endpoint.failing':
    'A merchant endpoint was marked failing: ENDPOINT_FAILING_THRESHOLD (3) of its deliveries in a row were abandoned with no success between (its merchant is emailed too, as before).',
  'endpoint.recovered': 'A failing merchant endpoint answered 2xx again; the failing mark is cleared.',
  'endpoint.disabled': 'A merchant endpoint was disabled: it receives nothing until it is enabled again.',
  'endpoint.paused': 'A merchant endpoint was paused: its deliveries wait until it is resumed.',
  'endpoint.resumed': 'A paused merchant endpoint was resumed: its waiting deliveries go out again.',
  'delivery.abandoned': 'A delivery to a merchant endpoint used its last attempt without a 2xx: it is given up.',
  'delivery.expired':
    'A delivery to a merchant endpoint reached its max age (DELIVERY_MAX_AGE) unanswered: it is given up.',
};

export const OperationalEndpointSchema = Type.Object(
  {
    id: Type.String({ description: 'The merchant endpoint (we_...).' }),
    url: Type.String({
      description:
        'Its full URL, as the merchant registered it: what the parcel system needs to contact the merchant about it.',
    }),
    status: Type.String({
      description: 'What it is now: enabled, failing, disabled, paused or deleted.',
    }),
  },
  {
    title: 'OperationalEndpoint',
    description: 'The merchant endpoint the event is about.',
    additionalProperties: false,
  },
);

export const OperationalDeliverySchema = Type.Object(
  {
    event_id: Type.String({ description: 'The merchant event that was not delivered (evt_...).' }),
    event_type: Type.String({ description: 'Its kind, e.g. parcel.delivered.' }),
    attempts: Type.Integer({ minimum: 0, description: 'Attempts made.' }),
    reason: Type.String({
      description:
        'Why it was given up: attempts_exhausted (delivery.abandoned: every attempt failed), endpoint_gone (delivery.abandoned: the endpoint answered 410 Gone, which ends the delivery at that attempt and disables the endpoint) or expired (delivery.expired).',
    }),
  },
  { title: 'OperationalDelivery', description: 'The delivery given up.', additionalProperties: false },
);

function operationalSchema<K extends OperationalEventType>(type: K) {
  const withDelivery = OPERATIONAL_DELIVERY_EVENT_TYPES.includes(type);
  const data = withDelivery
    ? Type.Object(
        { endpoint: OperationalEndpointSchema, delivery: OperationalDeliverySchema },
        { additionalProperties: false },
      )
    : Type.Object({ endpoint: OperationalEndpointSchema }, { additionalProperties: false });
  return Type.Object(
    {
      id: Type.String({ description: 'Unique event id (evt_...); the Webhook-Id header.' }),
      object: Type.Literal('event'),
      type: Type.Literal(type),
      created: Type.Integer({ description: 'Unix time in seconds.' }),
      account_id: Type.String({ description: 'The merchant account (acct_...) the endpoint belongs to.' }),
      livemode: Type.Boolean({ description: "The merchant endpoint's mode: true live, false test." }),
      data,
    },
    { title: `OperationalEvent ${type}`, additionalProperties: false },
  );
}

export const OPERATIONAL_EVENT_SCHEMAS: Record<OperationalEventType, TSchema> = {
  'endpoint.failing': operationalSchema('endpoint.failing'),
  'endpoint.recovered': operationalSchema('endpoint.recovered'),
  'endpoint.disabled': operationalSchema('endpoint.disabled'),
  'endpoint.paused': operationalSchema('endpoint.paused'),
  'endpoint.resumed': operationalSchema('endpoint.resumed'),
  'delivery.abandoned': operationalSchema('delivery.abandoned'),
  'delivery.expired': operationalSchema('delivery.expired'),
};

export interface OperationalEventBody {
  id: string;
  object: 'event';
  type: OperationalEventType;
  created: number;
  account_id: string;
  livemode: boolean;
  data: {
    endpoint: Static<typeof OperationalEndpointSchema>;
    delivery?: Static<typeof OperationalDeliverySchema>;
  };
}

/** A fixed example of each kind, for the docs. */
export function exampleOperationalEvent(type: OperationalEventType): OperationalEventBody {
  const failing = type === 'endpoint.failing';
  const status =
    type === 'endpoint.disabled'
      ? 'disabled'
      : type === 'endpoint.paused'
        ? 'paused'
        : failing || type === 'delivery.abandoned'
          ? 'failing'
          : 'enabled';
  const body: OperationalEventBody = {
    id: 'evt_3f2a9c1e7b8d4a6f9e0c1b2a3d4e5f60',
    object: 'event',
    type,
    created: 1763683200,
    account_id: 'acct_1a2b3c4d5e6f7a8b9c0d1e2f',
    livemode: true,
    data: { endpoint: { id: 'we_8YbN2kQpR4sT6uVwXyZ0aB1c', url: 'https://shop.example.com/hooks/parcels', status } },
  };
  if (OPERATIONAL_DELIVERY_EVENT_TYPES.includes(type)) {
    body.data.delivery = {
      event_id: 'evt_9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a',
      event_type: 'parcel.delivered',
      attempts: type === 'delivery.expired' ? 4 : 6,
      reason: type === 'delivery.expired' ? 'expired' : 'attempts_exhausted',
    };
  }
  return body;
}
