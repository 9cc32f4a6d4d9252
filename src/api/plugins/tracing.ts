import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Context,
  type Span,
} from '@opentelemetry/api';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { activeTracing, tracePool, tracer } from '../../infra/tracing';

declare module 'fastify' {
  interface FastifyRequest {
    /** The request's server span and its context; null when tracing is off. */
    trace: { span: Span; context: Context } | null;
  }
}

/**
 * A server span per request (`POST /internal/v1/events`, by route pattern), continuing the W3C `traceparent` the
 * caller sent (the parcel system publishing), and a span per Postgres query of the app's pool. With tracing off
 * (infra/tracing.ts) it adds no hook at all.
 *
 * The span names the route pattern (`http.route`, `/dashboard/sign-in/:token`), never the path the request asked
 * for, and records no `url.path` or query: a path may hold a secret (a sign-in link's token is a session of the
 * developers page), and spans leave for a tracing backend that logs' redaction does not reach. A request no route
 * matches is `unmatched`.
 */
async function tracingPlugin(fastify: FastifyInstance): Promise<void> {
  fastify.decorateRequest('trace', null);
  if (!activeTracing()) return;
  tracePool(fastify.pg);
  fastify.addHook('onRequest', async (request) => {
    const parent = propagation.extract(ROOT_CONTEXT, request.headers);
    const route = request.routeOptions.url ?? 'unmatched';
    const span = tracer().startSpan(
      `${request.method} ${route}`,
      {
        kind: SpanKind.SERVER,
        attributes: {
          'http.request.method': request.method,
          'http.route': route,
        },
      },
      parent,
    );
    request.trace = { span, context: trace.setSpan(parent, span) };
  });
  fastify.addHook('onResponse', async (request, reply) => {
    if (!request.trace) return;
    request.trace.span.setAttribute('http.response.status_code', reply.statusCode);
    if (reply.statusCode >= 500) request.trace.span.setStatus({ code: SpanStatusCode.ERROR });
    request.trace.span.end();
  });
}

/** Runs `work` inside the request's span, so what it does (queries, the publish's stored context) joins it. */
export function inRequestTrace<T>(request: FastifyRequest, work: () => T): T {
  return request.trace ? context.with(request.trace.context, work) : work();
}

export default fp(tracingPlugin, { name: 'tracing', dependencies: ['pg'] });
