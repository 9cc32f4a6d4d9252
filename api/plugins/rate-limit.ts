import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { ApiError } from '../../core/errors';

const WINDOW_MS = 60_000;

/**
 * Counts per API key once the auth plugin has identified it, else per client address, so one merchant's
 * burst never spends another's budget and a run of bad keys from one address is still throttled.
 * Only the merchant API (/v1) and unknown URLs (api/errors.ts, whose handler looks keys up too) are limited:
 * health probes and the internal publishing route are callers we run.
 * The counters live in this process; behind several API processes each keeps its own, so the effective
 * limit is per process (a shared store, e.g. Redis, would make it global).
 */
export function rateLimitKey(request: FastifyRequest): string {
  return request.auth ? `key:${request.auth.keyId}` : `ip:${request.ip}`;
}

async function rateLimitPlugin(app: FastifyInstance, options: { perMinute: number }): Promise<void> {
  await app.register(rateLimit, {
    max: options.perMinute,
    timeWindow: WINDOW_MS,
    keyGenerator: rateLimitKey,
    allowList: (request) => !request.is404 && !/^\/v1(\/|$)/.test(request.routeOptions.url ?? ''),
    errorResponseBuilder: (_request, context) =>
      new ApiError('rate_limited', `Too many requests: at most ${context.max} a minute; retry in ${context.after}.`),
  });
}

export default fp(rateLimitPlugin, { name: 'rate-limit', dependencies: ['auth'] });
