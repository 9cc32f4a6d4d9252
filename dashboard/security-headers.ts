import type { FastifyReply } from 'fastify';

/**
 * Headers on every answer under /dashboard. Scripts and styles come only from our own files (no inline
 * script or style attribute anywhere), no other origin may frame the page, forms post only to us, and no
 * address (a sign-in link's token) leaks to another site through Referer. Not `no-referrer`: with it a
 * browser sends `Origin: null` on our own form posts, and the cross-site check needs the real origin.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy': CONTENT_SECURITY_POLICY,
  'X-Frame-Options': 'DENY',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'same-origin',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'Permissions-Policy': 'camera=(), microphone=(), geolocation=(), payment=()',
};

export function setSecurityHeaders(reply: FastifyReply): void {
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) reply.header(name, value);
}

/** Pages carry account data and, once, keys and secrets: never stored by a browser or a proxy. */
export function sendPage(reply: FastifyReply, page: { toString(): string }, status = 200): FastifyReply {
  return reply.status(status).header('Cache-Control', 'no-store').type('text/html; charset=utf-8').send(page.toString());
}
