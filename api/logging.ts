import type { FastifyRequest } from 'fastify';

/** Anything shaped like one of our keys or signing secrets, wherever it turns up in a string. */
const SECRET_PATTERN = /\b(svc_(?:test|live)_|whsec_)[A-Za-z0-9+/=_-]*/g;

/** A developers page sign-in link carries its single-use token in the path. */
const SIGN_IN_LINK_PATTERN = /(\/dashboard\/sign-in\/)[^/?#]+/g;

export function scrubSecrets(text: string): string {
  return text.replace(SECRET_PATTERN, '$1[redacted]').replace(SIGN_IN_LINK_PATTERN, '$1[redacted]');
}

/**
 * Fastify's request log line, with the URL scrubbed: a client that pastes its key into a query string
 * (`?api_key=svc_live_...`) must not leave it in the logs. Redact paths cannot reach inside a string.
 */
export function serializeRequest(request: FastifyRequest): Record<string, unknown> {
  return {
    method: request.method,
    url: scrubSecrets(request.url),
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  };
}
