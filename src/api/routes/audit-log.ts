import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import Type from 'typebox';
import { AUDIT_ACTIONS, AuditEntryRecord, listAuditLog } from '../../domain/audit-log';
import { authOf } from '../plugins/auth';
import { errorResponses as errors, Limit, listOf } from '../schemas';

/** The audit log of the key's account and mode: a thin handler over domain/audit-log.ts. */

const DEFAULT_LIMIT = 10;

const AuditLogQuery = Type.Object(
  {
    limit: Type.Optional(Limit(DEFAULT_LIMIT)),
    starting_after: Type.Optional(Type.String({ maxLength: 255, description: 'An audit entry id (aud_...).' })),
    action: Type.Optional(
      Type.String({ maxLength: 100, description: `Only entries of this action: ${AUDIT_ACTIONS.join(', ')}.` }),
    ),
  },
  { additionalProperties: false },
);

export default async function auditLogRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/v1/audit_log',
    {
      // Who changed keys and endpoints is for those who may change endpoints.
      config: { scope: 'webhooks:manage' },
      schema: {
        tags: ['audit log'],
        summary: 'List the changes made to keys and endpoints, newest first, with who made them',
        querystring: AuditLogQuery,
        response: { 200: listOf(AuditEntryRecord, Type.Literal('/v1/audit_log')), ...errors },
      },
    },
    async (request) => {
      const { limit = DEFAULT_LIMIT, starting_after: startingAfter, action } = request.query;
      const auth = authOf(request);
      const page = await listAuditLog(app.pg, auth, { limit, startingAfter, action });
      return {
        object: 'list' as const,
        data: page.data,
        has_more: page.hasMore,
        url: '/v1/audit_log' as const,
        livemode: auth.livemode,
      };
    },
  );
}
