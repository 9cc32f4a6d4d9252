import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../core/errors';
import { SESSION_TTL_MS, type DashboardSession } from '../domain/dashboard-sessions';
import { DASHBOARD } from './views/paths';

/**
 * The session cookie and the cross-site checks, as the edge sees them; sessions themselves are
 * domain/dashboard-sessions.ts's.
 */

/**
 * The session cookie's name and attributes follow one rule. Wherever the cookie is Secure (PUBLIC_URL is https,
 * or, without PUBLIC_URL, the request came over https: TLS here, or a proxy TRUST_PROXY believes; never the Host
 * header), it is `__Host-parcel_dashboard_session` with `Path=/` and no Domain: a browser accepts that name only
 * from a secure page of this very host, so no sibling subdomain and no plain-http page can plant or overwrite the
 * session. On plain http (local development on loopback, tests) a browser refuses a `__Host-` cookie, since it
 * cannot be Secure, so the name is `parcel_dashboard_session`, scoped to `Path=/dashboard`. The cookie is read
 * under the name the same rule gives, never the other one. Both are HttpOnly and SameSite=Strict.
 */
export const SESSION_COOKIE = 'parcel_dashboard_session';
const SECURE_SESSION_COOKIE = `__Host-${SESSION_COOKIE}`;

declare module 'fastify' {
  interface FastifyRequest {
    dashboardSession?: DashboardSession;
  }
}

interface CookieShape {
  name: string;
  path: string;
  secure: boolean;
}

function sessionCookieShape(request: FastifyRequest, publicUrl: string | undefined): CookieShape {
  const secure = publicUrl ? publicUrl.startsWith('https:') : request.protocol === 'https';
  return secure
    ? { name: SECURE_SESSION_COOKIE, path: '/', secure }
    : { name: SESSION_COOKIE, path: DASHBOARD, secure };
}

export function readSessionCookie(request: FastifyRequest, publicUrl: string | undefined): string | undefined {
  const header = request.headers.cookie;
  if (!header) return undefined;
  const { name } = sessionCookieShape(request, publicUrl);
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

function cookieHeader(shape: CookieShape, value: string, maxAgeSeconds: number): string {
  const attributes = [
    `${shape.name}=${value}`,
    `Path=${shape.path}`,
    `Max-Age=${maxAgeSeconds}`,
    'HttpOnly',
    'SameSite=Strict',
  ];
  if (shape.secure) attributes.push('Secure');
  return attributes.join('; ');
}

export function setSessionCookie(
  request: FastifyRequest,
  reply: FastifyReply,
  sessionId: string,
  publicUrl: string | undefined,
): void {
  reply.header('Set-Cookie', cookieHeader(sessionCookieShape(request, publicUrl), sessionId, SESSION_TTL_MS / 1000));
}

export function clearSessionCookie(request: FastifyRequest, reply: FastifyReply, publicUrl: string | undefined): void {
  reply.header('Set-Cookie', cookieHeader(sessionCookieShape(request, publicUrl), '', 0));
}

/** The origins this API is reached on: its PUBLIC_URL and the address of this request. */
function ownOrigins(request: FastifyRequest, publicUrl: string | undefined): Set<string> {
  const origins = new Set([`${request.protocol}://${request.host}`]);
  if (publicUrl) origins.add(publicUrl);
  return origins;
}

/**
 * The first half of the cross-site check, before the session is even looked at: a browser names the page a
 * form came from (Origin; Sec-Fetch-Site where Origin is absent), and it must be ours. The session's token is
 * the second half.
 */
export function checkSameOrigin(request: FastifyRequest, publicUrl: string | undefined): void {
  const origin = request.headers.origin;
  const refuse = () => new ApiError('csrf_failed', 'This request came from another site and was refused.');
  if (origin !== undefined) {
    if (!ownOrigins(request, publicUrl).has(origin)) throw refuse();
    return;
  }
  const site = request.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none') throw refuse();
}
