import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance, FastifySchema, RouteOptions } from 'fastify';
import fp from 'fastify-plugin';
import { SCOPES } from '../../core/scopes';
import { PAGE_SECURITY_HEADERS } from '../../core/security-headers';
import { eventWebhooks } from '../event-webhooks-doc';
import { ErrorResponse } from '../schemas';

const AUTH_ERRORS = {
  401: {
    ...ErrorResponse,
    description: 'missing_api_key, malformed_api_key, invalid_api_key, revoked_api_key or expired_api_key.',
  },
  403: {
    ...ErrorResponse,
    description: 'client_not_active, client_suspended or insufficient_scope (naming the missing scope).',
  },
  429: { ...ErrorResponse, description: 'rate_limited; wait for the seconds in Retry-After.' },
};

/** Authenticated routes get the security requirement, their scope and the auth errors, from one place. */
function describeRoute({
  schema: given,
  url,
  route,
}: {
  schema: FastifySchema | undefined;
  url: string;
  route: RouteOptions;
}) {
  // Routes without a schema (test-only routes, plugins' own) come with none at all.
  const schema = given ?? {};
  const scope = route.config?.scope;
  if (route.config?.internal === true || url === '/openapi.json') return { schema: { ...schema, hide: true }, url };
  if (!scope) return { schema, url };
  const described = schema as FastifySchema & { description?: string; response?: Record<string, unknown> };
  return {
    url,
    schema: {
      ...described,
      description: `${described.description ? `${described.description}\n\n` : ''}Requires scope \`${scope}\`: ${SCOPES[scope]}`,
      security: [{ bearerAuth: [] }, { basicAuth: [] }],
      response: { ...AUTH_ERRORS, ...(described.response ?? {}) },
    },
  };
}

/**
 * The one <style> element Swagger UI's script adds, by its hash: it changes with the Swagger UI version, and the
 * docs test in Chromium then names the new one.
 */
const SWAGGER_UI_STYLE_HASH = "'sha256-RL3ie0nH+Lzz2YNqQN83mnU0J1ot4QL7b99vMdIX99w='";

/**
 * The policy of the Swagger UI page under /docs, on the developers page's origin: its own scripts and styles
 * only (it has no inline script; the styles it sets through the DOM are not restricted by a policy), its SVG
 * icons as data: URLs, the document fetched from here, and no validator badge from another site.
 */
export const DOCS_CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  `style-src 'self' ${SWAGGER_UI_STYLE_HASH}`,
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

const DOCS_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy': DOCS_CONTENT_SECURITY_POLICY,
  ...PAGE_SECURITY_HEADERS,
};

function isDocsRoute(route: string | undefined): boolean {
  return route === '/docs' || route?.startsWith('/docs/') === true;
}

/** OpenAPI from the route schemas at /openapi.json, and a browsable page at /docs. */
async function docsPlugin(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Parcel Webhooks API',
        version: '1',
        description:
          'Merchant API of the parcel delivery service. Authenticate with an API key, as `Authorization: Bearer <API_KEY>` ' +
          'or HTTP Basic with the key as username and an empty password. Keys starting `svc_test_` act in test mode ' +
          '(`livemode: false`), keys starting `svc_live_` in live mode. Errors: `{"error": {"type", "code", "message"}}`.',
      },
      components: {
        securitySchemes: {
          bearerAuth: {
            type: 'http',
            scheme: 'bearer',
            description: 'Authorization: Bearer svc_test_... or svc_live_...',
          },
          basicAuth: { type: 'http', scheme: 'basic', description: 'The API key as username, an empty password.' },
        },
      },
      // What the service posts to a merchant's endpoint, one entry per event kind.
      webhooks: eventWebhooks(),
    },
    transform: describeRoute,
  });
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    uiConfig: { validatorUrl: null },
  });
  // Every answer of a route under /docs, its static files too (served by a plugin of Swagger UI's own, without
  // its hooks). The matched route decides, not the URL as sent, which the router decodes first (`/%64ocs`).
  app.addHook('onRequest', async (request, reply) => {
    if (isDocsRoute(request.routeOptions.url)) reply.headers(DOCS_HEADERS);
  });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}

export default fp(docsPlugin, { name: 'docs', dependencies: ['auth'] });
