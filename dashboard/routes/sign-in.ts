import type { FastifyInstance } from 'fastify';
import { endSession, openSession } from '../../domain/dashboard-sessions';
import type { DashboardRouteOptions } from '../context';
import { clearSessionCookie, readSessionCookie, setSessionCookie } from '../session';
import { sendPage } from '../security-headers';
import { paths } from '../views/paths';
import { signedInPage, signInPage } from '../views/public';

/** Link openings per client address per minute: tokens are beyond guessing, this keeps anyone from trying. */
export const SIGN_IN_ATTEMPTS_PER_MINUTE = 10;

/** A fixed one-minute window per address, in this process (as the API's own rate limit is). */
function signInLimiter(perMinute: number) {
  const windows = new Map<string, { start: number; count: number }>();
  return (address: string, now = Date.now()): { allowed: boolean; retryAfterSeconds: number } => {
    if (windows.size > 10_000) for (const [key, w] of windows) if (now - w.start >= 60_000) windows.delete(key);
    const window = windows.get(address);
    if (!window || now - window.start >= 60_000) {
      windows.set(address, { start: now, count: 1 });
      return { allowed: true, retryAfterSeconds: 0 };
    }
    window.count += 1;
    return { allowed: window.count <= perMinute, retryAfterSeconds: Math.ceil((window.start + 60_000 - now) / 1000) };
  };
}

export default async function signInRoutes(app: FastifyInstance, options: DashboardRouteOptions): Promise<void> {
  const assets = options.assets.urls;
  const limit = signInLimiter(SIGN_IN_ATTEMPTS_PER_MINUTE);
  const hide = { hide: true };

  app.get('/dashboard', { schema: hide, config: { dashboard: 'page' } }, async (_request, reply) =>
    reply.redirect(paths.overview('test'), 303),
  );

  app.get<{ Querystring: { signed_out?: string } }>('/dashboard/sign-in', { schema: hide }, async (request, reply) =>
    sendPage(reply, signInPage({ assets, reason: request.query.signed_out ? 'signed-out' : 'no-session' })),
  );

  app.get<{ Params: { token: string } }>('/dashboard/sign-in/:token', { schema: hide }, async (request, reply) => {
    const verdict = limit(request.ip);
    if (!verdict.allowed) {
      reply.header('Retry-After', String(verdict.retryAfterSeconds));
      return sendPage(reply, signInPage({ assets, reason: 'rate-limited' }), 429);
    }
    const opened = await openSession(options.deps().pool, request.params.token);
    if (!opened) return sendPage(reply, signInPage({ assets, reason: 'link-invalid' }), 401);
    setSessionCookie(request, reply, opened.sessionId);
    return sendPage(reply, signedInPage({ assets }));
  });

  app.post('/dashboard/sign-out', { schema: hide, config: { dashboard: 'sign-out' } }, async (request, reply) => {
    await endSession(options.deps().pool, readSessionCookie(request));
    clearSessionCookie(request, reply);
    return reply.redirect(`${paths.signIn}?signed_out=1`, 303);
  });
}
