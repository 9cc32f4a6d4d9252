import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError, type ErrorCode } from '../core/errors';
import { isDependencyOutage, serviceUnavailable } from '../infra/outages';

/**
 * Fastify's own error codes mapped onto our catalogue; an outage of Postgres or Temporal is 503 (infra/outages.ts
 * decides what is one); anything else unknown becomes an opaque 500.
 */
const FASTIFY_CODES: Record<string, ErrorCode> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'body_too_large',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupported_media_type',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'invalid_request',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'invalid_json',
  FST_ERR_CTP_INVALID_JSON_BODY: 'invalid_json',
  FST_ERR_CTP_EMPTY_TYPE: 'unsupported_media_type',
  FST_ERR_CTP_INVALID_TYPE: 'unsupported_media_type',
};

/** Postgres refusing text (a NUL byte, say) is the client's input, not our failure. */
const UNSTORABLE_TEXT = new Set(['22021', '22P05']);

interface ValidationIssue {
  instancePath?: string;
  keyword?: string;
  message?: string;
  params?: Record<string, unknown>;
}

/** Turns an ajv validation failure into {code, param}: the first issue decides. */
function validationError(error: FastifyError): ApiError {
  const issue = (error.validation?.[0] ?? {}) as ValidationIssue;
  const context = (error as { validationContext?: string }).validationContext ?? 'body';
  let param = (issue.instancePath ?? '').replace(/^\//, '').replace(/\//g, '.');
  if (issue.keyword === 'required' && typeof issue.params?.missingProperty === 'string') {
    param = param ? `${param}.${issue.params.missingProperty}` : issue.params.missingProperty;
    return new ApiError('parameter_missing', `Missing required parameter: ${param}.`, { param });
  }
  if (issue.keyword === 'additionalProperties' && typeof issue.params?.additionalProperty === 'string') {
    param = param ? `${param}.${issue.params.additionalProperty}` : issue.params.additionalProperty;
    return new ApiError('parameter_unknown', `Received unknown parameter: ${param}.`, { param });
  }
  if (!param) {
    return new ApiError('invalid_request', `The request ${context} is invalid: ${issue.message ?? 'bad value'}.`);
  }
  return new ApiError('parameter_invalid', `Invalid ${context} parameter ${param}: ${issue.message ?? 'bad value'}.`, {
    param,
  });
}

export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  const fastifyError = error as FastifyError;
  if (fastifyError?.validation) return validationError(fastifyError);
  // Before the status checks below: a caller can only retry an outage, so it must never read as a 500.
  if (isDependencyOutage(error)) return serviceUnavailable();
  if (fastifyError?.code && UNSTORABLE_TEXT.has(fastifyError.code)) {
    return new ApiError('invalid_request', 'The request contains characters that cannot be stored, such as NUL.');
  }
  const mapped = fastifyError?.code ? FASTIFY_CODES[fastifyError.code] : undefined;
  if (mapped === 'body_too_large') return new ApiError(mapped, 'The request body is too large.');
  if (mapped === 'unsupported_media_type') {
    return new ApiError(mapped, 'Unsupported Content-Type: send JSON with Content-Type: application/json.');
  }
  if (fastifyError.code === 'FST_ERR_CTP_INVALID_CONTENT_LENGTH') {
    return new ApiError('invalid_request', 'The request body does not match its Content-Length header.');
  }
  if (mapped) return new ApiError(mapped, 'The request body is not valid JSON.');
  if (fastifyError?.statusCode === 429) {
    return new ApiError('rate_limited', 'Too many requests; retry after the time in Retry-After.');
  }
  if (fastifyError?.statusCode && fastifyError.statusCode >= 400 && fastifyError.statusCode < 500) {
    return new ApiError('invalid_request', 'The request is invalid.');
  }
  return new ApiError('internal_error', 'Something went wrong on our side; the error has been logged.');
}

export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error, request, reply) => {
    const apiError = toApiError(error);
    if (apiError.code === 'service_unavailable')
      request.log.warn({ err: error }, 'request refused: dependency unavailable');
    else if (apiError.status >= 500) request.log.error({ err: error }, 'request failed');
    else request.log.info({ code: apiError.code }, 'request rejected');
    if (apiError.status === 401) reply.header('WWW-Authenticate', 'Bearer');
    for (const [name, value] of Object.entries(apiError.headers)) reply.header(name, value);
    // A recognised key's mode travels with its errors too (every response made with a test key says livemode false).
    const body = request.auth ? { ...apiError.toBody(), livemode: request.auth.livemode } : apiError.toBody();
    return reply.status(apiError.status).send(body);
  });
}

/** The 404 of a URL no route answers (here, or on the other side of INTERNAL_PORT). */
export function routeNotFound(request: FastifyRequest): ApiError {
  return new ApiError('route_not_found', `Unrecognized request URL (${request.method} ${request.url.split('?')[0]}).`);
}

/**
 * Unknown URLs: 404 route_not_found in our wire shape. Registered once the rate limiter exists: the handler
 * looks the presented key up in Postgres, so unknown URLs are limited per address like the API routes, before
 * any lookup (otherwise a loop over random URLs with random keys is free database load).
 */
export function registerNotFound(app: FastifyInstance): void {
  app.setNotFoundHandler({ preHandler: app.rateLimit() }, async (request, reply) => {
    const error = routeNotFound(request);
    // Still 404 whatever the key (never 401), but a usable key's mode travels with it as on every response.
    // app.identify is the auth plugin's decorator: read through the instance, so no arrow runs back to it. A
    // client refused for its bad keys gets no lookup, and its 404 no mode.
    const auth = request.headers.authorization ? await app.identify(request).catch(() => undefined) : undefined;
    return reply.status(404).send(auth ? { ...error.toBody(), livemode: auth.livemode } : error.toBody());
  });
}

/**
 * How long a client has to send its whole request, headers and body (at most 64 KiB): past it the request is
 * answered 408 request_timeout and its connection closed (clientErrorHandler), so a client trickling a body byte
 * by byte cannot hold a connection open for ever. Node checks every CONNECTIONS_CHECK_MS for such requests.
 */
export const REQUEST_TIMEOUT_MS = 30_000;
export const CONNECTIONS_CHECK_MS = 1_000;

/**
 * Requests Node's HTTP parser refuses (oversized headers, a broken request line, a slow client) never reach
 * Fastify's error handler; Fastify's default answer there has its own body shape. Same wire shape as the rest.
 */
export function clientErrorHandler(error: NodeJS.ErrnoException, socket: Socket): void {
  // A reset or destroyed socket has nobody left to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const apiError =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? new ApiError('headers_too_large', 'The request headers are too large.')
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? new ApiError('request_timeout', 'The request took too long to arrive.')
        : new ApiError('invalid_request', 'The request is not valid HTTP.');
  const body = JSON.stringify(apiError.toBody());
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${apiError.status} ${STATUS_CODES[apiError.status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}
