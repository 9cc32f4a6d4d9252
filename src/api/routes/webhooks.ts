import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import Type from 'typebox';
import {
  EndpointCreateBody,
  EndpointRecord,
  EndpointUpdateBody,
  EndpointWithSecret,
  MAX_ROTATION_GRACE_SECONDS,
  deleteEndpoint,
  getEndpoint,
  listEndpoints,
  registerEndpoint,
  rotateEndpointSecret,
  updateEndpoint,
  type EndpointDeps,
} from '../../domain/endpoints';
import { pauseEndpoint, resumeEndpoint } from '../../domain/endpoint-lifecycle';
import { PostedEvent } from '../../domain/event-log';
import { recoverEndpoint, sendTestEvent } from '../../domain/redelivery';
import { DeliveryAttemptRecord, listDeliveries } from '../../domain/deliveries';
import { EVENT_TYPES } from '../../core/event-catalog';
import type { Lookup } from '../../infra/ssrf';
import { actorOf, authOf } from '../plugins/auth';
import { errorResponses as errors, Limit, listOf, UnixSeconds } from '../schemas';

/** Webhook endpoints: thin handlers over domain/endpoints.ts, domain/deliveries.ts and domain/redelivery.ts. */

const EndpointParams = Type.Object({ id: Type.String({ description: 'Webhook endpoint id (we_...).' }) });

const DEFAULT_LIMIT = 10;

const RotateBody = Type.Object(
  {
    expires_in_seconds: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: MAX_ROTATION_GRACE_SECONDS,
        description: 'How long the previous secret keeps signing deliveries; default WEBHOOK_SECRET_ROTATION_GRACE.',
      }),
    ),
  },
  { additionalProperties: false },
);

const ListQuery = Type.Object(
  {
    limit: Type.Optional(Limit(DEFAULT_LIMIT)),
    starting_after: Type.Optional(Type.String({ description: 'An endpoint id (we_...).' })),
  },
  { additionalProperties: false },
);

const DeliveriesQuery = Type.Object(
  {
    limit: Type.Optional(Limit(DEFAULT_LIMIT)),
    starting_after: Type.Optional(Type.String({ description: 'A delivery attempt id (dlv_...).' })),
    event_id: Type.Optional(Type.String({ maxLength: 255, description: 'Only attempts for this event.' })),
    outcome: Type.Optional(Type.Union([Type.Literal('succeeded'), Type.Literal('failed')])),
  },
  { additionalProperties: false },
);

const RecoverBody = Type.Object(
  {
    since: UnixSeconds('Unix seconds: events created at or after this.'),
    until: Type.Optional(UnixSeconds('Unix seconds: events created at or before this; default now.')),
  },
  { additionalProperties: false },
);

const Recovery = Type.Object({
  object: Type.Literal('recovery'),
  id: Type.Union([Type.String(), Type.Null()], {
    description: 'The recovery (rcv_...), null when nothing needed recovering.',
  }),
  endpoint_id: Type.String(),
  event_count: Type.Integer({
    description: 'Events that get a new delivery (trigger recover), started at a bounded pace.',
  }),
  livemode: Type.Boolean(),
});

const TestBody = Type.Object(
  {
    type: Type.Optional(Type.String({ description: `Event kind, default parcel.created: ${EVENT_TYPES.join(', ')}.` })),
  },
  { additionalProperties: false },
);

const TestEvent = PostedEvent;

const Deleted = Type.Object({
  id: Type.String(),
  object: Type.Literal('webhook_endpoint'),
  deleted: Type.Literal(true),
  livemode: Type.Boolean(),
});

export interface WebhookRouteOptions {
  /** Replaces dns.lookup in the SSRF check (tests). */
  lookup?: Lookup;
}

export default async function webhookRoutes(
  fastify: FastifyInstance,
  options: WebhookRouteOptions = {},
): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const deps = (): EndpointDeps => ({ pool: app.pg, config: app.config, lookup: options.lookup });
  // Resend, recover and test only store deliveries: a worker's dispatcher starts them, so no Temporal here.
  const redeliveryDeps = () => ({ pool: app.pg, config: app.config });
  const tags = ['webhooks'];
  // Every route here manages endpoints: the scope is declared with each route, the one place it is read from.
  const config = { scope: 'webhooks:manage' } as const;

  app.post(
    '/v1/webhooks',
    {
      config,
      schema: {
        tags,
        summary: 'Register a webhook endpoint',
        body: EndpointCreateBody,
        response: { 200: EndpointWithSecret, ...errors },
      },
    },
    async (request) => registerEndpoint(deps(), authOf(request), request.body, actorOf(request)),
  );

  app.get(
    '/v1/webhooks',
    {
      config,
      schema: {
        tags,
        summary: 'List webhook endpoints, newest first',
        querystring: ListQuery,
        response: { 200: listOf(EndpointRecord, Type.String()), ...errors },
      },
    },
    async (request) => {
      const { limit = DEFAULT_LIMIT, starting_after: startingAfter } = request.query;
      const auth = authOf(request);
      const page = await listEndpoints(deps(), auth, { limit, startingAfter });
      return {
        object: 'list' as const,
        data: page.data,
        has_more: page.hasMore,
        url: '/v1/webhooks',
        livemode: auth.livemode,
      };
    },
  );

  app.get(
    '/v1/webhooks/:id',
    {
      config,
      schema: {
        tags,
        summary: 'Read a webhook endpoint (without its secret)',
        params: EndpointParams,
        response: { 200: EndpointRecord, ...errors },
      },
    },
    async (request) => getEndpoint(deps(), authOf(request), request.params.id),
  );

  app.patch(
    '/v1/webhooks/:id',
    {
      config,
      schema: {
        tags,
        summary: 'Change or disable a webhook endpoint',
        params: EndpointParams,
        body: EndpointUpdateBody,
        response: { 200: EndpointRecord, ...errors },
      },
    },
    async (request) => updateEndpoint(deps(), authOf(request), request.params.id, request.body ?? {}, actorOf(request)),
  );

  for (const [action, change, summary] of [
    ['pause', pauseEndpoint, 'Pause a webhook endpoint: new events and retries are held, not attempted, until resumed'],
    [
      'resume',
      resumeEndpoint,
      'Resume a paused webhook endpoint: what was held is delivered, in order and within its rate limit',
    ],
  ] as const) {
    app.post(
      `/v1/webhooks/:id/${action}`,
      {
        config,
        schema: { tags, summary, params: EndpointParams, response: { 200: EndpointRecord, ...errors } },
      },
      async (request) => change(deps(), authOf(request), request.params.id, actorOf(request)),
    );
  }

  app.post(
    '/v1/webhooks/:id/recover',
    {
      config,
      schema: {
        tags,
        summary: 'Deliver again every event of a window that never reached this endpoint, at a bounded pace',
        params: EndpointParams,
        body: RecoverBody,
        response: { 202: Recovery, ...errors },
      },
    },
    async (request, reply) => {
      const recovery = await recoverEndpoint(redeliveryDeps(), authOf(request), request.params.id, request.body);
      return reply.status(202).send(recovery);
    },
  );

  app.post(
    '/v1/webhooks/:id/test',
    {
      config,
      schema: {
        tags,
        summary: 'Send this endpoint a synthetic event with sample data',
        params: EndpointParams,
        body: TestBody,
        response: { 202: TestEvent, ...errors },
      },
    },
    async (request, reply) => {
      const event = await sendTestEvent(redeliveryDeps(), authOf(request), request.params.id, {
        type: request.body?.type,
      });
      return reply.status(202).send(event);
    },
  );

  app.delete(
    '/v1/webhooks/:id',
    {
      config,
      schema: {
        tags,
        summary: 'Remove a webhook endpoint',
        params: EndpointParams,
        response: { 200: Deleted, ...errors },
      },
    },
    async (request) => {
      const auth = authOf(request);
      await deleteEndpoint(deps(), auth, request.params.id, actorOf(request));
      return {
        id: request.params.id,
        object: 'webhook_endpoint' as const,
        deleted: true as const,
        livemode: auth.livemode,
      };
    },
  );

  app.post(
    '/v1/webhooks/:id/secret/rotate',
    {
      config,
      schema: {
        tags,
        summary: 'Rotate the signing secret; the new one is shown once',
        params: EndpointParams,
        body: RotateBody,
        response: { 200: EndpointWithSecret, ...errors },
      },
    },
    async (request) =>
      rotateEndpointSecret(deps(), authOf(request), request.params.id, actorOf(request), {
        expiresInSeconds: request.body.expires_in_seconds,
      }),
  );

  app.get(
    '/v1/webhooks/:id/deliveries',
    {
      config,
      schema: {
        tags,
        summary: 'List every delivery attempt for an endpoint, newest first',
        params: EndpointParams,
        querystring: DeliveriesQuery,
        response: { 200: listOf(DeliveryAttemptRecord, Type.String()), ...errors },
      },
    },
    async (request) => {
      const { limit = DEFAULT_LIMIT, starting_after: startingAfter, event_id: eventId, outcome } = request.query;
      const { id } = request.params;
      const auth = authOf(request);
      const page = await listDeliveries(deps(), auth, id, { limit, startingAfter, eventId, outcome });
      const url = `/v1/webhooks/${id}/deliveries`;
      return { object: 'list' as const, data: page.data, has_more: page.hasMore, url, livemode: auth.livemode };
    },
  );
}
