import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { OPERATIONAL_EVENT_TYPES } from '../../core/operational-event-schemas';
import {
  deleteOperationalEndpoint,
  listOperationalEndpoints,
  OperationalEndpointRecord,
  OperationalEndpointWithSecret,
  registerOperationalEndpoint,
} from '../../domain/operational-webhooks';
import { errorResponses } from '../schemas';
import { checkToken } from './internal-events';

/**
 * Operational webhooks for the parcel system, behind the same internal token as publishing: where the service
 * tells it that a merchant's endpoint is failing, recovered, disabled, paused or resumed, or that a delivery was
 * abandoned or expired (docs/events.md, "Operational events").
 */

const RegisterBody = Type.Object(
  {
    url: Type.String({ description: 'https URL that receives the operational events.' }),
    events: Type.Optional(
      Type.Array(Type.String(), {
        maxItems: 50,
        description: `Kinds to receive (${OPERATIONAL_EVENT_TYPES.join(', ')}); omitted or empty: every kind.`,
      }),
    ),
  },
  { additionalProperties: false },
);

const Params = Type.Object({ id: Type.String({ description: 'Operational webhook endpoint id (owe_...).' }) });

const List = Type.Object({ object: Type.Literal('list'), data: Type.Array(OperationalEndpointRecord) });

const Deleted = Type.Object({
  id: Type.String(),
  object: Type.Literal('operational_webhook_endpoint'),
  deleted: Type.Literal(true),
});

export default async function internalOperationalWebhookRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const route = {
    config: { internal: true },
    onRequest: async (request: Parameters<typeof checkToken>[0]) =>
      checkToken(request, app.config.internalApiToken, app.internalTokenFailures),
  };
  const tags = ['internal'];

  app.post(
    '/internal/v1/operational-webhooks',
    {
      ...route,
      schema: {
        tags,
        summary: 'Register an operational webhook endpoint (parcel system only)',
        body: RegisterBody,
        response: { 201: OperationalEndpointWithSecret, ...errorResponses },
      },
    },
    async (request, reply) => {
      const created = await registerOperationalEndpoint({ pool: app.pg, config: app.config }, request.body);
      return reply.status(201).send(created);
    },
  );

  app.get(
    '/internal/v1/operational-webhooks',
    {
      ...route,
      schema: {
        tags,
        summary: 'List the operational webhook endpoints (parcel system only)',
        response: { 200: List, ...errorResponses },
      },
    },
    async () => ({ object: 'list' as const, data: await listOperationalEndpoints({ pool: app.pg }) }),
  );

  app.delete(
    '/internal/v1/operational-webhooks/:id',
    {
      ...route,
      schema: {
        tags,
        summary: 'Remove an operational webhook endpoint (parcel system only)',
        params: Params,
        response: { 200: Deleted, ...errorResponses },
      },
    },
    async (request) => {
      await deleteOperationalEndpoint({ pool: app.pg }, request.params.id);
      return { id: request.params.id, object: 'operational_webhook_endpoint' as const, deleted: true as const };
    },
  );
}
