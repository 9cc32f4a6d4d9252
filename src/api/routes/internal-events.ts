import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { ApiError } from '../../core/errors';
import type { CredentialFailures } from '../../infra/credential-failures';
import { EVENT_TYPES } from '../../core/event-catalog';
import { renderEvent } from '../../core/versions';
import { PostedEvent } from '../../domain/event-log';
import { publishEvent } from '../../domain/events';
import { inRequestTrace } from '../plugins/tracing';
import { routeNotFound } from '../errors';
import { errorResponses } from '../schemas';
import { clientLimitKey } from '../../infra/client-address';

/**
 * Internal publishing for the parcel system: a thin handler over publishEvent, behind
 * one shared token. Without INTERNAL_API_TOKEN the route answers as if it did not exist.
 */

const PublishBody = Type.Object(
  {
    account_id: Type.String({ minLength: 1, description: 'Account the event belongs to (acct_...).' }),
    livemode: Type.Boolean({
      description: 'Live (true) or test (false) mode: only endpoints of that mode receive it.',
    }),
    type: Type.String({ description: `Event kind: ${EVENT_TYPES.join(', ')}.` }),
    data: Type.Object(
      {},
      {
        additionalProperties: true,
        description:
          "data.parcel for parcel events; for cod.settled, data.parcel and data.cod_settlement (the newest version's shape), or data.cod_settlement naming its parcel (2026-11-21's). Stored in the newest shape.",
      },
    ),
    id: Type.Optional(Type.String({ description: 'evt_ + 1 to 64 of [A-Za-z0-9_]; the same id twice is one event.' })),
  },
  { additionalProperties: false },
);

const PublishedEvent = Type.Object({
  ...PostedEvent.properties,
  account_id: Type.String(),
  endpoint_count: Type.Integer({ description: 'Endpoints subscribed when the event was first published.' }),
});

/** Hashing first makes both sides one length, so the comparison itself leaks nothing either. */
function tokenMatches(presented: string, expected: string): boolean {
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(presented), digest(expected));
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Wrong internal tokens per client address (infra/credential-failures.ts), shared by every internal route. */
    internalTokenFailures: CredentialFailures;
  }
}

export function checkToken(request: FastifyRequest, expected: string | undefined, failures: CredentialFailures): void {
  if (expected === undefined) {
    throw routeNotFound(request);
  }
  // Before the comparison: a client guessing tokens is stopped after a few, whatever it sends next.
  failures.check(clientLimitKey(request.ip));
  const header = request.headers.authorization ?? '';
  const match = /^Bearer (.+)$/.exec(header);
  if (!match || !tokenMatches(match[1] as string, expected)) {
    failures.record(clientLimitKey(request.ip));
    throw new ApiError(
      'invalid_internal_token',
      'Send the internal token as Authorization: Bearer <INTERNAL_API_TOKEN>.',
    );
  }
}

export default async function internalEventRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.post(
    '/internal/v1/events',
    {
      config: { internal: true },
      // Before the body is read: an unauthenticated caller gets nothing parsed or validated.
      onRequest: async (request) => checkToken(request, app.config.internalApiToken, app.internalTokenFailures),
      schema: {
        tags: ['internal'],
        summary: 'Publish an event (parcel system only)',
        description:
          'Stores the event and its deliveries; a 2xx means it is accepted and will be delivered, even if the delivery ' +
          'engine is down right now. Retrying with the same id returns the same event (200), never a second delivery. ' +
          "data may have any served API version's shape; the answer shows the event in that version.",
        body: PublishBody,
        response: { 200: PublishedEvent, 201: PublishedEvent, ...errorResponses },
      },
    },
    async (request, reply) => {
      const { account_id, livemode, type, data, id } = request.body;
      // The parcel system's traceparent is continued: the delivery's spans and every POST join its trace.
      const traceParent = typeof request.headers.traceparent === 'string' ? request.headers.traceparent : undefined;
      const published = await inRequestTrace(request, () =>
        publishEvent({ pool: app.pg }, { accountId: account_id, livemode, type, data, id, traceParent }),
      );
      // Answered in the shape the publisher sent, so its own view of the event does not change under it.
      const event = renderEvent(published.event, published.inputVersion);
      request.trace?.span.setAttributes({
        'parcel.event.id': published.event.id,
        'parcel.event.type': published.event.type,
      });
      return reply.status(published.created ? 201 : 200).send({
        ...event,
        account_id: published.accountId,
        endpoint_count: published.endpointIds.length,
      });
    },
  );
}
