import type { FastifyReply } from 'fastify';
import { PAGE_SECURITY_HEADERS } from '../core/security-headers';

/**
 * Headers on every answer under /dashboard: the page headers of core/security-headers.ts, and a policy under
 * which scripts and styles come only from our own files (no inline script or style attribute anywhere), no
 * other origin may frame the page and forms post only to us.
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
  ...PAGE_SECURITY_HEADERS,
};

export function setSecurityHeaders(reply: FastifyReply): void {
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) reply.header(name, value);
}

/** Pages carry account data and, once, keys and secrets: never stored by a browser or a proxy. */
export function sendPage(reply: FastifyReply, page: { toString(): string }, status = 200): FastifyReply {
  return reply
    .status(status)
    .header('Cache-Control', 'no-store')
    .type('text/html; charset=utf-8')
    .send(page.toString());
}
