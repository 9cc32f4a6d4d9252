import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import Type from 'typebox';
import { EVENT_TYPES } from '../../core/event-catalog';
import { LATEST_API_VERSION, renderEvent } from '../../core/versions';
import { validateApiVersion } from '../../domain/endpoints';
import { EventRecord, EventWithDeliveries, getEvent, listEvents } from '../../domain/event-log';
import { resendEvent } from '../../domain/redelivery';
import { authOf } from '../plugins/auth';
import { errorResponses as errors, Limit, listOf, ServiceVersionHeaders } from '../schemas';

/** Events of the caller's account and mode, for the merchant self-service API: thin handlers over the domain. */

const DEFAULT_LIMIT = 10;

const EventParams = Type.Object({ id: Type.String({ description: 'Event id (evt_...).' }) });

const ListQuery = Type.Object(
  {
    limit: Type.Optional(Limit(DEFAULT_LIMIT)),
    starting_after: Type.Optional(Type.String({ description: 'An event id (evt_...): the page after it.' })),
    type: Type.Optional(Type.String({ description: `Only events of this kind: ${EVENT_TYPES.join(', ')}.` })),
    delivery_state: Type.Optional(
      Type.Union(
        [
          Type.Literal('not_delivered'),
          Type.Literal('delivered'),
          Type.Literal('retrying'),
          Type.Literal('abandoned'),
          Type.Literal('none'),
        ],
        { description: 'Only events whose delivery_state is this; not_delivered is retrying or abandoned.' },
      ),
    ),
    id: Type.Optional(Type.String({ description: 'Only the event with this id (evt_...).' })),
    parcel: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        description:
          "Only events about this parcel: its id, parcel_number or tracking_number (a settlement's parcel_id or parcel_number).",
      }),
    ),
  },
  { additionalProperties: false },
);

const ResendBody = Type.Object(
  {
    endpoint_id: Type.Optional(
      Type.String({ description: 'One endpoint (we_...); omitted: every live endpoint the event was delivered to.' }),
    ),
  },
  { additionalProperties: false },
);

const Resend = Type.Object({
  object: Type.Literal('resend'),
  event_id: Type.String(),
  endpoint_ids: Type.Array(Type.String(), { description: 'Endpoints a new delivery (trigger resend) was made for.' }),
  livemode: Type.Boolean(),
});

/** The version the request names in Service-Version (unknown: unknown_api_version), else the newest. */
function requestedVersion(request: FastifyRequest): string {
  const named = request.headers['service-version'];
  return validateApiVersion(Array.isArray(named) ? named.join(',') : named, 'Service-Version') ?? LATEST_API_VERSION;
}

export default async function eventRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['events'];
  // Events are read and resent with the scope that manages webhooks: they are what the endpoints receive.
  const config = { scope: 'webhooks:manage' } as const;

  app.get(
    '/v1/events',
    {
      config,
      schema: {
        tags,
        summary: 'List events, newest first',
        description: 'Each event in the API version named by the Service-Version header, else the newest.',
        headers: ServiceVersionHeaders,
        querystring: ListQuery,
        response: { 200: listOf(EventRecord, Type.String()), ...errors },
      },
    },
    async (request, reply) => {
      const version = requestedVersion(request);
      const {
        limit = DEFAULT_LIMIT,
        starting_after: startingAfter,
        type,
        delivery_state: deliveryState,
        id,
        parcel,
      } = request.query;
      const auth = authOf(request);
      const page = await listEvents(app.pg, auth, { limit, startingAfter, type, deliveryState, id, parcel });
      void reply.header('service-version', version);
      const data = page.data.map((event) => renderEvent(event, version));
      return { object: 'list' as const, data, has_more: page.hasMore, url: '/v1/events', livemode: auth.livemode };
    },
  );

  app.get(
    '/v1/events/:id',
    {
      config,
      schema: {
        tags,
        summary: 'Read an event with every delivery of it',
        description: 'The event in the API version named by the Service-Version header, else the newest.',
        headers: ServiceVersionHeaders,
        params: EventParams,
        response: { 200: EventWithDeliveries, ...errors },
      },
    },
    async (request, reply) => {
      const version = requestedVersion(request);
      const event = await getEvent(app.pg, authOf(request), request.params.id);
      void reply.header('service-version', version);
      return renderEvent(event, version);
    },
  );

  app.post(
    '/v1/events/:id/resend',
    {
      config,
      schema: {
        tags,
        summary: 'Deliver an event again (same id and bytes, fresh signature, the usual ladder)',
        params: EventParams,
        body: ResendBody,
        response: { 202: Resend, ...errors },
      },
    },
    async (request, reply) => {
      // Stored only: a worker's dispatcher starts the delivery (domain/outbox.ts), so this needs no Temporal.
      const resent = await resendEvent({ pool: app.pg, config: app.config }, authOf(request), request.params.id, {
        endpointId: request.body?.endpoint_id,
      });
      return reply.status(202).send(resent);
    },
  );
}
