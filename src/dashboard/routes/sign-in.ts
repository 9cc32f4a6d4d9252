import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { endAccountSessions, endSession, isSignInLinkUsable, openSession } from '../../domain/dashboard-sessions';
import type { DashboardRouteOptions } from '../context';
import { clearSessionCookie, readSessionCookie, setSessionCookie } from '../session';
import { sendPage } from '../security-headers';
import { paths } from '../views/paths';
import { signInLinkPage, signInPage } from '../views/public';
import { clientLimitKey } from '../../infra/client-address';

/**
 * Failed link attempts (unknown, used or expired links, opened or posted) per client address per minute; past
 * them the address is refused until its minute ends. Tokens are beyond guessing: this keeps anyone from trying.
 * Working links do not count, so a person signing in (open, then post) is never held up by their own clicks.
 */
export const SIGN_IN_FAILURES_PER_MINUTE = 10;

/**
 * A fixed one-minute window per address, in this process (as the API's own rate limit is). The address is the
 * client's as TRUST_PROXY allows: behind a trusted proxy, each client has its own window.
 */
function signInLimiter(perMinute: number) {
  const windows = new Map<string, { start: number; count: number }>();
  const current = (address: string, now: number) => {
    if (windows.size > 10_000) for (const [key, w] of windows) if (now - w.start >= 60_000) windows.delete(key);
    const window = windows.get(address);
    return window && now - window.start < 60_000 ? window : undefined;
  };
  return {
    /** Seconds until the address may try again, or undefined when it may now. */
    retryAfter(address: string, now = Date.now()): number | undefined {
      const window = current(address, now);
      return window && window.count >= perMinute ? Math.ceil((window.start + 60_000 - now) / 1000) : undefined;
    },
    failed(address: string, now = Date.now()): void {
      const window = current(address, now);
      if (window) window.count += 1;
      else windows.set(address, { start: now, count: 1 });
    },
  };
}

type LinkRequest = FastifyRequest<{ Params: { token: string } }>;

export default async function signInRoutes(app: FastifyInstance, options: DashboardRouteOptions): Promise<void> {
  const assets = options.assets.urls;
  const limiter = signInLimiter(SIGN_IN_FAILURES_PER_MINUTE);
  const hide = { hide: true };

  /** The 429 page once an address has spent its minute's failures, else undefined. */
  const limited = (request: FastifyRequest, reply: FastifyReply): FastifyReply | undefined => {
    const seconds = limiter.retryAfter(clientLimitKey(request.ip));
    if (seconds === undefined) return undefined;
    reply.header('Retry-After', String(seconds));
    return sendPage(reply, signInPage({ assets, reason: 'rate-limited' }), 429);
  };
  const linkInvalid = (request: FastifyRequest, reply: FastifyReply): FastifyReply => {
    limiter.failed(clientLimitKey(request.ip));
    return sendPage(reply, signInPage({ assets, reason: 'link-invalid' }), 401);
  };

  app.get('/dashboard', { schema: hide, config: { dashboard: 'page' } }, async (_request, reply) =>
    reply.redirect(paths.overview('test'), 303),
  );

  app.get<{ Querystring: { signed_out?: string } }>('/dashboard/sign-in', { schema: hide }, async (request, reply) => {
    const signedOut = request.query.signed_out;
    const reason = signedOut === 'everywhere' ? 'signed-out-everywhere' : signedOut ? 'signed-out' : 'no-session';
    return sendPage(reply, signInPage({ assets, reason }));
  });

  // Opening a link (GET, and the HEAD Fastify answers with it) only looks: the button below uses it.
  app.get('/dashboard/sign-in/:token', { schema: hide }, async (request: LinkRequest, reply) => {
    const refused = limited(request, reply);
    if (refused) return refused;
    const { token } = request.params;
    if (!(await isSignInLinkUsable(options.deps().pool, token))) return linkInvalid(request, reply);
    return sendPage(reply, signInLinkPage({ assets, action: paths.signInLink(token) }));
  });

  // The page's own form: from our origin only (the guard's cross-site check), with the token in its address.
  app.post(
    '/dashboard/sign-in/:token',
    { schema: hide, config: { dashboard: 'sign-in' } },
    async (request: LinkRequest, reply) => {
      const { pool, config } = options.deps();
      const refused = limited(request, reply);
      if (refused) return refused;
      const opened = await openSession(pool, request.params.token, readSessionCookie(request, config.publicUrl));
      if (!opened) return linkInvalid(request, reply);
      setSessionCookie(request, reply, opened.sessionId, config.publicUrl);
      // Same-site from start to end (our page posted here), so the SameSite=Strict cookie goes with the redirect.
      return reply.redirect(paths.home, 303);
    },
  );

  app.post('/dashboard/sign-out', { schema: hide, config: { dashboard: 'sign-out' } }, async (request, reply) => {
    const { pool, config } = options.deps();
    await endSession(pool, readSessionCookie(request, config.publicUrl));
    clearSessionCookie(request, reply, config.publicUrl);
    return reply.redirect(`${paths.signIn}?signed_out=1`, 303);
  });

  app.post(
    '/dashboard/sign-out-everywhere',
    { schema: hide, config: { dashboard: 'sign-out' } },
    async (request, reply) => {
      const { pool, config } = options.deps();
      if (request.dashboardSession) await endAccountSessions(pool, request.dashboardSession);
      clearSessionCookie(request, reply, config.publicUrl);
      return reply.redirect(`${paths.signIn}?signed_out=everywhere`, 303);
    },
  );
}
