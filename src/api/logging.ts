import type { FastifyRequest } from 'fastify';
import pinoPretty, { type PrettyStream } from 'pino-pretty';

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

/**
 * Readable lines for a terminal, through pino-pretty (pino has no pretty printer of its own since v7). It
 * formats records after pino has redacted and serialised them, in this thread: a stream, not a worker-thread
 * transport, so the last lines before an exit are not lost.
 */
export function prettyLogStream(destination: NodeJS.WritableStream, colorize: boolean): PrettyStream {
  return pinoPretty({
    destination,
    colorize,
    translateTime: 'SYS:HH:MM:ss.l',
    // Request lines read `incoming request GET /v1/towns`, `request completed 200 3 ms` instead of nested JSON.
    messageFormat: (log, messageKey) => {
      const req = log.req as { method?: string; url?: string } | undefined;
      const res = log.res as { statusCode?: number } | undefined;
      const time = typeof log.responseTime === 'number' ? ` ${Math.round(log.responseTime)} ms` : '';
      const request = req ? ` ${req.method} ${req.url}` : '';
      return `${String(log[messageKey])}${request}${res ? ` ${res.statusCode}${time}` : ''}`;
    },
    ignore: 'pid,hostname,req,res,responseTime',
    singleLine: true,
    sync: true,
  });
}
