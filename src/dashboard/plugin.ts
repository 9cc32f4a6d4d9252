import type { FastifyInstance } from 'fastify';
import { ApiError } from '../core/errors';
import { isDependencyOutage, serviceUnavailable } from '../infra/outages';
import { loadAssets } from './assets';
import type { DashboardRouteOptions } from './context';
import { addFormParser } from './forms';
import { checkDeclaredAccess, guardRequest } from './guard';
import assetRoutes from './routes/assets';
import endpointRoutes from './routes/endpoints';
import auditLogRoutes from './routes/audit-log';
import eventRoutes from './routes/events';
import eventTypeRoutes from './routes/event-types';
import keyRoutes from './routes/keys';
import overviewRoutes from './routes/overview';
import signInRoutes from './routes/sign-in';
import { sendPage, setSecurityHeaders } from './security-headers';
import { merchantMessage } from './views/messages';
import { errorPage } from './views/public';

/**
 * The developers page: server-rendered HTML under /dashboard, served by the API process. Routes are thin: they
 * read a form, call the same domain functions as the API and the CLI, and render what comes back; every rule,
 * and every error, is the domain's. What the routes share with this plugin is in ./context.ts. Every request
 * passes the one guard (./guard.ts) before its handler: registered here once, it covers every route below, so
 * no route carries a check of its own.
 */

const ERROR_TITLES: Record<number, string> = {
  400: 'That did not work',
  403: 'Request refused',
  404: 'Page not found',
  413: 'Too much data',
  415: 'Not a form',
  429: 'Too many requests',
  503: 'Temporarily unavailable',
};

/** What Fastify refuses while reading a body, in the catalogue's terms: a form too large, or not a form at all. */
function bodyError(error: unknown): ApiError | undefined {
  const code = (error as { code?: unknown }).code;
  if (code === 'FST_ERR_CTP_BODY_TOO_LARGE') return new ApiError('body_too_large', 'The form is too large.');
  if (code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' || code === 'FST_ERR_CTP_INVALID_TYPE') {
    return new ApiError(
      'unsupported_media_type',
      'The developers page reads forms only: send Content-Type: application/x-www-form-urlencoded.',
    );
  }
  return undefined;
}

export default async function dashboardPlugin(app: FastifyInstance): Promise<void> {
  const assets = loadAssets();
  const routeOptions: DashboardRouteOptions = { assets, deps: () => ({ pool: app.pg, config: app.config }) };
  addFormParser(app);
  app.addHook('onRequest', async (_request, reply) => setSecurityHeaders(reply));
  app.addHook('onRoute', checkDeclaredAccess);
  app.addHook('preHandler', async (request, reply) => guardRequest(request, reply, routeOptions));
  app.setErrorHandler((error, request, reply) => {
    // The API's one classifier: an outage of Postgres or Temporal is 503 with Retry-After here too, never a 500.
    const apiError =
      error instanceof ApiError ? error : isDependencyOutage(error) ? serviceUnavailable() : bodyError(error);
    const status =
      apiError?.status ??
      ((error as { statusCode?: number }).statusCode && (error as { statusCode: number }).statusCode < 500
        ? (error as { statusCode: number }).statusCode
        : 500);
    if (status >= 500) request.log.error({ err: error }, 'developers page request failed');
    const message =
      status >= 500 && !apiError
        ? merchantMessage({ code: 'internal_error', message: '' }).message
        : apiError
          ? merchantMessage({ code: apiError.code, message: apiError.message }).message
          : 'The request could not be read.';
    for (const [name, value] of Object.entries(apiError?.headers ?? {})) reply.header(name, value);
    return sendPage(
      reply,
      errorPage({
        assets: assets.urls,
        title: ERROR_TITLES[status] ?? 'Something went wrong',
        message,
        code: apiError?.code,
      }),
      status,
    );
  });
  await app.register(assetRoutes, { assets });
  await app.register(signInRoutes, routeOptions);
  await app.register(overviewRoutes, routeOptions);
  await app.register(keyRoutes, routeOptions);
  await app.register(endpointRoutes, routeOptions);
  await app.register(eventRoutes, routeOptions);
  await app.register(eventTypeRoutes, routeOptions);
  await app.register(auditLogRoutes, routeOptions);
  // Anything else under /dashboard: the page's own 404, never the API's JSON.
  app.all('/dashboard/*', { schema: { hide: true } }, async () => {
    throw new ApiError('route_not_found', 'There is no such page on the developers page.');
  });
}
