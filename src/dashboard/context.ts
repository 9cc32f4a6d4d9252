import type { FastifyRequest } from 'fastify';
import { ApiError } from '../core/errors';
import type { Pool } from '../db/pool';
import { dashboardActor, type AuditActor } from '../domain/audit-log';
import type { Config } from '../infra/config';
import type { Lookup } from '../infra/ssrf';
import type { AssetTable } from './assets';
import type { EndpointFeatures } from './views/endpoints';
import type { Mode, PageContext, Section } from './views/models';

/**
 * What the developers page's routes share with the plugin that registers them: who may reach a route, the
 * dependencies and assets a route is given, the features the page offers, and the helpers every page uses.
 */

/**
 * What a route asks of a request (./guard.ts): for reading methods, anyone (`public`, the default) or a session
 * (`page`); every other method is an `action` (the whole guard) unless it is the sign-in link's post (`sign-in`)
 * or a sign-out (`sign-out`).
 */
export type Access = 'public' | 'page' | 'action' | 'sign-in' | 'sign-out';

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

/** What the page offers: it shows a form only when the domain function behind it exists. */
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
export function pageContext(
  request: FastifyRequest,
  assets: AssetTable,
  mode: Mode,
  extra: Partial<PageContext> = {},
): PageContext {
  const session = request.dashboardSession;
  if (!session) throw new Error('page rendered without a session: the route lacks config.dashboard');
  const sections: Section[] = FEATURES.events
    ? ['overview', 'keys', 'endpoints', 'events', 'event-types', 'audit-log']
    : ['overview', 'keys', 'endpoints', 'event-types', 'audit-log'];
  return { account: session.account, mode, csrfToken: session.csrfToken, assets: assets.urls, sections, ...extra };
}

/** Who the audit log says made a change through this request: its page session, by the session's public id. */
export function actorOf(request: FastifyRequest): AuditActor {
  const session = request.dashboardSession;
  if (!session) throw new Error('change made without a session: the route lacks config.dashboard');
  return dashboardActor(session.id);
}

/** Fixed notices shown after a redirect; the query names one, never carries its text. */
export const NOTICES = {
  key_revoked: 'Key revoked. Requests made with it now fail with revoked_api_key.',
  endpoint_deleted: 'Endpoint deleted. It receives nothing more.',
  endpoint_disabled: 'Endpoint disabled. It gets no new events and its pending retries stop.',
  endpoint_enabled: 'Endpoint enabled. New events reach it again; use Recover for what it missed.',
  endpoint_updated: 'Endpoint saved.',
  endpoint_paused: 'Endpoint paused. New events and retries are held, nothing is sent, until you resume it.',
  endpoint_resumed:
    'Endpoint resumed. What was held goes out within a few minutes, in order and within its rate limit.',
  test_sent: 'Test event sent. Its delivery appears below as it happens.',
  resent: 'Resent. The new deliveries appear below as they happen.',
} as const;

export function notice(query: unknown): string | undefined {
  const name = (query as { notice?: unknown } | undefined)?.notice;
  return typeof name === 'string' && Object.prototype.hasOwnProperty.call(NOTICES, name)
    ? NOTICES[name as keyof typeof NOTICES]
    : undefined;
}
