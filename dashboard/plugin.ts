import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../core/errors';
import { assertCanChange, checkCsrfToken, findSession } from '../domain/dashboard-sessions';
import type { Pool } from '../db/pool';
import type { Config } from '../infra/config';
import { isDependencyOutage, serviceUnavailable } from '../infra/outages';
import type { Lookup } from '../infra/ssrf';
import { loadAssets, type AssetTable } from './assets';
import { addFormParser, text, type FormBody } from './forms';
import assetRoutes from './routes/assets';
import endpointRoutes from './routes/endpoints';
import eventRoutes from './routes/events';
import keyRoutes from './routes/keys';
import signInRoutes from './routes/sign-in';
import { checkSameOrigin, readSessionCookie } from './session';
import { sendPage, setSecurityHeaders } from './security-headers';
import { merchantMessage } from './views/messages';
import type { EndpointFeatures } from './views/endpoints';
import type { Mode, PageContext, Section } from './views/models';
import { errorPage, signInPage } from './views/public';

/**
 * The developers page: server-rendered HTML under /dashboard, served by the API
 * process. Routes are thin: they read a form, call the same domain functions as the API and the CLI, and
 * render what comes back; every rule, and every error, is the domain's.
 */

/** Who may reach a route: anyone, a session (pages), or a session posting its token from our own origin. */
export type Access = 'public' | 'page' | 'action' | 'sign-out';

declare module 'fastify' {
  interface FastifyContextConfig {
    dashboard?: Access;
  }
}

export interface DashboardDeps {
  pool: Pool;
  config: Config;
  lookup?: Lookup;
}

export interface DashboardRouteOptions {
  assets: AssetTable;
  deps: () => DashboardDeps;
}

/**
 * The forms the page offers: it shows one only when the domain function behind it exists.
 */
export const FEATURES: { events: boolean; endpoint: EndpointFeatures } = {
  events: true,
  endpoint: { change: true, test: true, recover: true },
};

const MODES: readonly Mode[] = ['test', 'live'];

export function parseModeParam(value: string): Mode {
  if ((MODES as readonly string[]).includes(value)) return value as Mode;
  throw new ApiError('route_not_found', 'No such page.');
}

/** What every signed-in page's frame needs, from the session the guard found. */
export function pageContext(request: FastifyRequest, assets: AssetTable, mode: Mode, extra: Partial<PageContext> = {}): PageContext {
  const session = request.dashboardSession;
  if (!session) throw new Error('page rendered without a session: the route lacks config.dashboard');
  const sections: Section[] = FEATURES.events ? ['keys', 'endpoints', 'events'] : ['keys', 'endpoints'];
  return { account: session.account, mode, csrfToken: session.csrfToken, assets: assets.urls, sections, ...extra };
}

/** Fixed notices shown after a redirect; the query names one, never carries its text. */
export const NOTICES = {
  key_revoked: 'Key revoked. Requests made with it now fail with revoked_api_key.',
  endpoint_deleted: 'Endpoint deleted. It receives nothing more.',
  endpoint_disabled: 'Endpoint disabled. It gets no new events and its pending retries stop.',
  endpoint_enabled: 'Endpoint enabled. New events reach it again; use Recover for what it missed.',
  endpoint_updated: 'Endpoint saved.',
  test_sent: 'Test event sent. Its delivery appears below as it happens.',
  resent: 'Resent. The new deliveries appear below as they happen.',
} as const;

export function notice(query: unknown): string | undefined {
  const name = (query as { notice?: unknown } | undefined)?.notice;
  return typeof name === 'string' && Object.prototype.hasOwnProperty.call(NOTICES, name) ? NOTICES[name as keyof typeof NOTICES] : undefined;
}

async function guard(request: FastifyRequest, reply: FastifyReply, options: DashboardRouteOptions): Promise<FastifyReply | undefined> {
  const access = request.routeOptions.config.dashboard ?? 'public';
  if (access === 'public') return undefined;
  const { pool, config } = options.deps();
  // Cross-site first: a forged post learns nothing, not even whether a session exists.
  if (access !== 'page') checkSameOrigin(request, config.publicUrl);
  const session = await findSession(pool, readSessionCookie(request));
  if (!session) return sendPage(reply, signInPage({ assets: options.assets.urls }), 401);
  request.dashboardSession = session;
  if (access === 'page') return undefined;
  checkCsrfToken(session, text(request.body as FormBody | undefined, '_csrf'));
  if (access === 'action') assertCanChange(session);
  return undefined;
}

const ERROR_TITLES: Record<number, string> = {
  400: 'That did not work',
  403: 'Request refused',
  404: 'Page not found',
  413: 'Too much data',
  429: 'Too many requests',
  503: 'Temporarily unavailable',
};

export default async function dashboardPlugin(app: FastifyInstance): Promise<void> {
  const assets = loadAssets();
  const routeOptions: DashboardRouteOptions = { assets, deps: () => ({ pool: app.pg, config: app.config }) };
  addFormParser(app);
  app.addHook('onRequest', async (_request, reply) => setSecurityHeaders(reply));
  app.addHook('preHandler', async (request, reply) => guard(request, reply, routeOptions));
  app.setErrorHandler((error, request, reply) => {
    // The API's one classifier: an outage of Postgres or Temporal is 503 with Retry-After here too, never a 500.
    const apiError = error instanceof ApiError ? error : isDependencyOutage(error) ? serviceUnavailable() : undefined;
    const status = apiError?.status ?? ((error as { statusCode?: number }).statusCode && (error as { statusCode: number }).statusCode < 500 ? (error as { statusCode: number }).statusCode : 500);
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
      errorPage({ assets: assets.urls, title: ERROR_TITLES[status] ?? 'Something went wrong', message, code: apiError?.code }),
      status,
    );
  });
  await app.register(assetRoutes, { assets });
  await app.register(signInRoutes, routeOptions);
  await app.register(keyRoutes, routeOptions);
  await app.register(endpointRoutes, routeOptions);
  await app.register(eventRoutes, routeOptions);
  // Anything else under /dashboard: the page's own 404, never the API's JSON.
  app.all('/dashboard/*', { schema: { hide: true } }, async () => {
    throw new ApiError('route_not_found', 'There is no such page on the developers page.');
  });
}
