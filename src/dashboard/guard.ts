import type { FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { assertModeOpen } from '../domain/api-keys';
import { checkCsrfToken, findSession } from '../domain/dashboard-sessions';
import { clientLimitKey } from '../infra/client-address';
import { CredentialFailures } from '../infra/credential-failures';
import { spendPageAction } from './actions';
import { parseModeParam, type Access, type DashboardRouteOptions } from './context';
import { text, type FormBody } from './forms';
import { sendPage } from './security-headers';
import { checkSameOrigin, readSessionCookie } from './session';
import { signInPage } from './views/public';

/**
 * The one guard of the developers page, run by the plugin before every route's handler. Reading methods (GET,
 * HEAD) pass as their route declares (`public`, or `page`: a session). Every other method is a change, whatever
 * its route declares, and passes all of it, in this order:
 * 1. the cross-site check's first half: the Origin (or Sec-Fetch-Site) names our own site;
 * 2. a live session, and the form's `_csrf` equal to its token (403 csrf_failed otherwise);
 * 3. the account may change this mode: a suspended account changes nothing, a pending one nothing in live mode
 *    (client_not_active, the API's rule for live keys);
 * 4. the session's budget of PAGE_ACTIONS_PER_MINUTE changes (./actions.ts).
 * A change is made in one mode, named in its address (`/dashboard/:mode/...`); a changing route without one is
 * a page that does not exist. Two kinds of route stop early, each for a reason of its own: `sign-in` after step 1
 * (no session exists yet; the single-use link in its address is the credential), `sign-out` after step 2 (ending
 * a session is never refused, not even to a suspended account or a spent budget).
 */

const READING_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD']);

/** What a request must pass: its route's declaration for reading methods, the whole guard for any other. */
export function accessOf(method: string, declared: Access | undefined): Access {
  if (READING_METHODS.has(method)) return declared ?? 'public';
  return declared === 'sign-in' || declared === 'sign-out' ? declared : 'action';
}

/** At registration (onRoute): a route that changes cannot declare itself a mere page. */
export function checkDeclaredAccess(route: RouteOptions): void {
  const declared = route.config?.dashboard;
  const changes = [route.method].flat().some((method) => !READING_METHODS.has(method));
  if (changes && (declared === 'public' || declared === 'page')) {
    throw new Error(
      `${String(route.method)} ${route.url}: a route that changes passes the whole guard; it cannot be declared '${declared}'.`,
    );
  }
}

/**
 * Session cookies naming no live session a client address may present a minute. Each costs a lookup, so past
 * this the address gets the sign-in page (429, Retry-After) without one. A browser whose session ended presents
 * its cookie once or twice before signing in again; only guessing reaches this.
 */
export const UNKNOWN_SESSIONS_PER_MINUTE = 10;

/** One counter per mounted page (its route options), so two apps in one process never share counts. */
const unknownSessions = new WeakMap<DashboardRouteOptions, CredentialFailures>();
function unknownSessionsOf(options: DashboardRouteOptions): CredentialFailures {
  let failures = unknownSessions.get(options);
  if (!failures) {
    failures = new CredentialFailures(UNKNOWN_SESSIONS_PER_MINUTE, 60_000, 'session cookies');
    unknownSessions.set(options, failures);
  }
  return failures;
}

export async function guardRequest(
  request: FastifyRequest,
  reply: FastifyReply,
  options: DashboardRouteOptions,
): Promise<FastifyReply | undefined> {
  const access = accessOf(request.method, request.routeOptions.config.dashboard);
  if (access === 'public') return undefined;
  const { pool, config } = options.deps();
  // Cross-site first: a forged post learns nothing, not even whether a session exists.
  if (access !== 'page') checkSameOrigin(request, config.publicUrl);
  if (access === 'sign-in') return undefined;
  const sessionId = readSessionCookie(request, config.publicUrl);
  const client = clientLimitKey(request.ip);
  if (sessionId !== undefined) {
    const seconds = unknownSessionsOf(options).retryAfter(client);
    if (seconds !== undefined) {
      reply.header('Retry-After', String(seconds));
      return sendPage(reply, signInPage({ assets: options.assets.urls, reason: 'rate-limited' }), 429);
    }
  }
  const session = await findSession(pool, sessionId);
  if (!session) {
    if (sessionId !== undefined) unknownSessionsOf(options).record(client);
    return sendPage(reply, signInPage({ assets: options.assets.urls }), 401);
  }
  request.dashboardSession = session;
  if (access === 'page') return undefined;
  checkCsrfToken(session, text(request.body as FormBody | undefined, '_csrf'));
  if (access === 'sign-out') return undefined;
  assertModeOpen(
    session.account.status,
    parseModeParam((request.params as { mode?: string } | undefined)?.mode ?? ''),
    'Live mode opens once the account is approved: until then, keys, endpoints and events can be changed in test mode only.',
  );
  // The session's CSRF token is unique to it and never leaves this process's memory here.
  spendPageAction(session.csrfToken);
  return undefined;
}
