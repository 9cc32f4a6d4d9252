import Type, { type Static } from 'typebox';
import { ApiError } from '../core/errors';
import { EVENT_TYPES, isEventType } from '../core/event-catalog';
import { listEventDeliveries, type DeliveryRow } from '../db/deliveries';
import type { EndpointScope } from '../db/endpoints';
import { findEventOf, listEventsOf, type EventDeliveryState, type EventListRow } from '../db/events';
import type { Pool } from '../db/pool';
import { DeliveryTriggerSchema } from './deliveries';
import { unixSeconds, type Page } from './endpoints';
import { EVENT_ID_PATTERN } from './events';

/**
 * The events merchants read (GET /v1/events, GET /v1/events/:id, the developers page, the CLI): each as it was
 * posted, with how many endpoints still have a delivery running, where its delivery stands and, for one event,
 * every delivery of it. The list filters by kind, delivery state, id and parcel.
 * Scoped to one account and mode; anything else is resource_missing.
 */

/** The event as it is posted to endpoints: every route that answers with an event starts from it. */
export const PostedEvent = Type.Object({
  id: Type.String(),
  object: Type.Literal('event'),
  type: Type.String(),
  created: Type.Integer({ description: 'Unix seconds, fixed when the event was created.' }),
  data: Type.Object({}, { additionalProperties: true }),
  livemode: Type.Boolean(),
  sequence: Type.Optional(
    Type.Integer({
      minimum: 1,
      description:
        'Set on every event about a parcel (data.parcel.id): 1, 2, 3 ... per parcel (account and mode), in publish order. A receiver that has applied a higher sequence for the parcel can drop this event as a stale state. Absent on events without a parcel.',
    }),
  ),
});

/**
 * Where an event's delivery stands, from its deliveries; per endpoint the best of its deliveries counts, so a
 * resend that succeeded makes up for an abandoned delivery, and an endpoint never sent the event (every delivery
 * skipped: disabled, removed) does not count.
 */
export const DELIVERY_STATES = {
  delivered: 'Every endpoint it was sent to received it.',
  retrying: 'Some endpoint has not received it yet and is being retried.',
  abandoned: 'Some endpoint never received it: every attempt failed; nothing is retrying.',
  none: 'It was sent to no endpoint (none subscribed, or each was disabled or removed first).',
} as const satisfies Record<EventDeliveryState, string>;

/** The `delivery_state` filter: a state, or `not_delivered` for retrying and abandoned together. */
export const DELIVERY_STATE_FILTERS = ['not_delivered', 'delivered', 'retrying', 'abandoned', 'none'] as const;
export type DeliveryStateFilter = (typeof DELIVERY_STATE_FILTERS)[number];

export const EventRecord = Type.Object({
  ...PostedEvent.properties,
  pending_webhooks: Type.Integer({ description: 'Endpoints with a delivery of this event still running.' }),
  delivery_state: Type.Union(
    [Type.Literal('delivered'), Type.Literal('retrying'), Type.Literal('abandoned'), Type.Literal('none')],
    {
      description: Object.entries(DELIVERY_STATES)
        .map(([state, meaning]) => `${state}: ${meaning}`)
        .join(' '),
    },
  ),
});
export type EventRecord = Static<typeof EventRecord>;

export const EventDelivery = Type.Object({
  id: Type.String({ description: 'The delivery (dly_...): one ladder of attempts to one endpoint.' }),
  endpoint_id: Type.String(),
  trigger: DeliveryTriggerSchema,
  status: Type.Union([
    Type.Literal('pending'),
    Type.Literal('succeeded'),
    Type.Literal('failed'),
    Type.Literal('skipped'),
  ]),
  reason: Type.Union([Type.String(), Type.Null()], {
    description:
      'Why it was skipped or failed (endpoint_disabled, attempts_exhausted, expired, endpoint_gone: it answered 410 Gone, ...).',
  }),
  attempts: Type.Integer(),
  last_status_code: Type.Union([Type.Integer(), Type.Null()]),
  last_attempt_at: Type.Union([Type.Integer(), Type.Null()], {
    description: 'Unix seconds; null before the first attempt.',
  }),
  waiting_for: Type.Union([Type.String(), Type.Null()], {
    description:
      "To an endpoint with ordering parcel: the parcel's event (evt_...) whose delivery to that endpoint must end before this one's first attempt; null otherwise.",
  }),
  created: Type.Integer({ description: 'Unix seconds.' }),
});

export const EventWithDeliveries = Type.Object({
  ...EventRecord.properties,
  deliveries: Type.Array(EventDelivery, { description: 'One entry per delivery of this event, oldest first.' }),
});
export type EventWithDeliveries = Static<typeof EventWithDeliveries>;

function toEventRecord(row: EventListRow): EventRecord {
  // The stored bytes are the posted event: shown as they were sent.
  const posted = JSON.parse(row.body) as Omit<EventRecord, 'pending_webhooks'>;
  return {
    ...posted,
    livemode: row.livemode,
    pending_webhooks: row.pending_webhooks,
    delivery_state: row.delivery_state,
  };
}

/** The parcel number an event is about (a parcel event's parcel, a settlement's parcel), if it names one. */
export function parcelNumberOf(event: { data: unknown }): string | undefined {
  const data = event.data as {
    parcel?: { parcel_number?: unknown };
    cod_settlement?: { parcel_number?: unknown };
  } | null;
  const number = data?.parcel?.parcel_number ?? data?.cod_settlement?.parcel_number;
  return typeof number === 'string' ? number : undefined;
}

function toEventDelivery(row: DeliveryRow): Static<typeof EventDelivery> {
  return {
    id: row.id,
    endpoint_id: row.endpoint_id,
    trigger: row.trigger,
    status: row.status,
    reason: row.reason,
    attempts: row.attempts,
    last_status_code: row.last_status_code,
    last_attempt_at: row.last_attempt_at ? unixSeconds(row.last_attempt_at) : null,
    // Recorded by the ladder's lane check; once an attempt is made (or the delivery ended) it waits no more.
    waiting_for: row.status === 'pending' && row.attempts === 0 ? row.waiting_for : null,
    created: unixSeconds(row.created_at),
  };
}

function eventMissing(id: string, param?: string): ApiError {
  const shown = id.length > 80 ? `${id.slice(0, 80)}...` : id;
  return new ApiError('resource_missing', `No such event: '${shown}'.`, param ? { param } : {});
}

export interface EventListQuery {
  limit: number;
  startingAfter?: string;
  /** A known kind. */
  type?: string;
  deliveryState?: string;
  /** One event by its id (evt_...). */
  id?: string;
  /** A parcel's id, parcel number or tracking number. */
  parcel?: string;
}

const MAX_SEARCH_LENGTH = 200;

function deliveryStates(filter: string | undefined): EventDeliveryState[] | undefined {
  if (filter === undefined) return undefined;
  if (!(DELIVERY_STATE_FILTERS as readonly string[]).includes(filter)) {
    throw new ApiError(
      'parameter_invalid',
      `Unknown delivery state ${JSON.stringify(filter.slice(0, 100))}; use one of ${DELIVERY_STATE_FILTERS.join(', ')}.`,
      {
        param: 'delivery_state',
      },
    );
  }
  return filter === 'not_delivered' ? ['retrying', 'abandoned'] : [filter as EventDeliveryState];
}

/** Newest first by publication, narrowed by kind, delivery state, id or parcel; `type` must be a known kind. */
export async function listEvents(pool: Pool, scope: EndpointScope, page: EventListQuery): Promise<Page<EventRecord>> {
  if (page.type !== undefined && !isEventType(page.type)) {
    throw new ApiError(
      'unknown_event_type',
      `Unknown event type ${JSON.stringify(page.type.slice(0, 100))}; use one of ${EVENT_TYPES.join(', ')}.`,
      {
        param: 'type',
      },
    );
  }
  const states = deliveryStates(page.deliveryState);
  if (page.parcel !== undefined && (page.parcel.length === 0 || page.parcel.length > MAX_SEARCH_LENGTH)) {
    throw new ApiError(
      'parameter_invalid',
      `A parcel is found by its id, number or tracking number, 1 to ${MAX_SEARCH_LENGTH} characters.`,
      { param: 'parcel' },
    );
  }
  // An id that cannot be an event's finds nothing (not an error: it is a search).
  if (page.id !== undefined && !EVENT_ID_PATTERN.test(page.id)) return { data: [], hasMore: false };
  const cursor = page.startingAfter;
  const filter = {
    limit: page.limit,
    startingAfter: page.startingAfter,
    type: page.type,
    id: page.id,
    parcel: page.parcel,
    deliveryStates: states,
  };
  const result =
    cursor === undefined || EVENT_ID_PATTERN.test(cursor) ? await listEventsOf(pool, scope, filter) : undefined;
  if (!result) throw eventMissing(cursor ?? '', 'starting_after');
  return { data: result.rows.map(toEventRecord), hasMore: result.hasMore };
}

export async function getEvent(pool: Pool, scope: EndpointScope, id: string): Promise<EventWithDeliveries> {
  const row = EVENT_ID_PATTERN.test(id) ? await findEventOf(pool, scope, id) : undefined;
  if (!row) throw eventMissing(id);
  const deliveries = await listEventDeliveries(pool, row.id);
  return { ...toEventRecord(row), deliveries: deliveries.map(toEventDelivery) };
}
