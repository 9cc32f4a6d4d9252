import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { configuredOrigin, createSignInLink } from '../../domain/dashboard-sessions';
import type { Config } from '../../infra/config';
import { errorResponses } from '../schemas';
import { checkToken } from './internal-events';

/**
 * Sign-in links to the developers page for the parcel service, which embeds or forwards them: behind the same
 * internal token as publishing. Opening one shows a Sign in button; only its post uses the link.
 */

const Body = Type.Object(
  { account_id: Type.String({ minLength: 1, maxLength: 200, description: 'The account to sign in (acct_...).' }) },
  { additionalProperties: false },
);

const SignInLink = Type.Object({
  url: Type.String({ description: 'Absolute, single-use, valid 10 minutes; on PUBLIC_URL when set.' }),
  expires_at: Type.Integer({ description: 'Unix seconds.' }),
});

/**
 * PUBLIC_URL, else the origin this request reached us on; on INTERNAL_PORT, which browsers cannot reach, the
 * public listening address instead (as the CLI builds its links).
 */
export function publicOrigin(request: FastifyRequest, config: Config): string {
  if (config.publicUrl) return config.publicUrl;
  return config.internalPort === undefined ? `${request.protocol}://${request.host}` : configuredOrigin(config);
}

export default async function internalDashboardSessionRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.post(
    '/internal/v1/dashboard/sessions',
    {
      config: { internal: true },
      onRequest: async (request) => checkToken(request, app.config.internalApiToken, app.internalTokenFailures),
      schema: {
        tags: ['internal'],
        summary: 'Create a single-use sign-in link to the developers page (parcel system only)',
        body: Body,
        response: { 201: SignInLink, ...errorResponses },
      },
    },
    async (request, reply) => {
      const link = await createSignInLink(app.pg, {
        accountId: request.body.account_id,
        origin: publicOrigin(request, app.config),
      });
      return reply.status(201).send(link);
    },
  );
}
