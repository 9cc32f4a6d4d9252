import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { listTowns } from '../../domain/towns';
import { authOf } from '../plugins/auth';
import { errorResponses, Limit, listOf } from '../schemas';

/** Enough for the whole seeded list in one page; clients that page still can. */
const DEFAULT_LIMIT = 100;

const Town = Type.Object(
  {
    id: Type.String({ examples: ['town_nairobi'] }),
    object: Type.Literal('town'),
    name: Type.String({ examples: ['Nairobi'] }),
    county: Type.String({ examples: ['Nairobi'] }),
    country: Type.String({ description: 'ISO 3166-1 alpha-2', examples: ['KE'] }),
    latitude: Type.Union([Type.Number(), Type.Null()]),
    longitude: Type.Union([Type.Number(), Type.Null()]),
  },
  { description: 'A town with pickup stations.' },
);

const TownQuery = Type.Object(
  {
    limit: Type.Optional(Limit(DEFAULT_LIMIT, 'Towns per page, 1 to 100.')),
    starting_after: Type.Optional(
      Type.String({
        pattern: '^town_[a-z0-9_]{1,60}$',
        description: 'Cursor: the id of the last town of the previous page.',
      }),
    ),
    county: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 100,
        pattern: '^[^\\u0000-\\u001f]+$',
        description: 'Only towns of this county.',
      }),
    ),
  },
  { additionalProperties: false },
);

const TownList = listOf(Town, Type.Literal('/v1/towns'));

export default async function townRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/v1/towns',
    {
      config: { scope: 'network:read' },
      schema: {
        summary: 'List towns',
        description: 'Towns the service delivers to, in alphabetical order, with cursor pagination.',
        tags: ['network'],
        querystring: TownQuery,
        response: { 200: TownList, ...errorResponses },
      },
    },
    async (request) => {
      const { limit = DEFAULT_LIMIT, starting_after: startingAfter, county } = request.query;
      const page = await listTowns(app.pg, { limit, startingAfter, county });
      return {
        object: 'list' as const,
        data: page.towns,
        has_more: page.hasMore,
        url: '/v1/towns' as const,
        livemode: authOf(request).livemode,
      };
    },
  );
}
