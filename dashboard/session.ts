import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../core/errors';
import { SESSION_TTL_MS, type DashboardSession } from '../domain/dashboard-sessions';
import { DASHBOARD } from './views/paths';

/**
 * The session cookie and the cross-site checks, as the edge sees them; sessions themselves are
 * domain/dashboard-sessions.ts's.
 */

export const SESSION_COOKIE = 'parcel_dashboard_session';

declare module 'fastify' {
  interface FastifyRequest {
    dashboardSession?: DashboardSession;
  }
}

export function readSessionCookie(request: FastifyRequest): string | undefined {
  const header = request.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === SESSION_COOKIE) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/**
 * Secure when the API's public address is https (PUBLIC_URL), or, without one, when this request came over
 * https (TLS here, or a proxy TRUST_PROXY believes). Never from the Host header. Plain http (local development)
 * gets a cookie a browser sends back over http.
 */
function secureCookie(request: FastifyRequest, publicUrl: string | undefined): boolean {
  return publicUrl ? publicUrl.startsWith('https:') : request.protocol === 'https';
}

export function setSessionCookie(request: FastifyRequest, reply: FastifyReply, sessionId: string, publicUrl: string | undefined): void {
  const attributes = [
    `${SESSION_COOKIE}=${sessionId}`,
    `Path=${DASHBOARD}`,
    `Max-Age=${SESSION_TTL_MS / 1000}`,
    'HttpOnly',
    'SameSite=Strict',
  ];
  if (secureCookie(request, publicUrl)) attributes.push('Secure');
  reply.header('Set-Cookie', attributes.join('; '));
}

export function clearSessionCookie(request: FastifyRequest, reply: FastifyReply, publicUrl: string | undefined): void {
  const attributes = [`${SESSION_COOKIE}=`, `Path=${DASHBOARD}`, 'Max-Age=0', 'HttpOnly', 'SameSite=Strict'];
  if (secureCookie(request, publicUrl)) attributes.push('Secure');
  reply.header('Set-Cookie', attributes.join('; '));
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
