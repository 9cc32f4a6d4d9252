import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { ApiError } from '../../core/errors';
import { clientLimitKey } from '../../infra/client-address';

const WINDOW_MS = 60_000;

/**
 * Counts per API key once the auth plugin has identified it, else per client address, so one merchant's
 * burst never spends another's budget and a run of bad keys from one address is still throttled.
 * An account's keys also share one budget (ACCOUNT_RATE_LIMIT_FACTOR), so making keys does not multiply it.
 * Only the merchant API (/v1) and unknown URLs (api/errors.ts, whose handler looks keys up too) are limited:
 * health probes and the internal publishing route are callers we run.
 * The counters live in this process; behind several API processes each keeps its own, so the effective
 * limit is per process (a shared store, e.g. Redis, would make it global).
 */
export function rateLimitKey(request: FastifyRequest): string {
  return request.auth ? `key:${request.auth.keyId}` : `ip:${clientLimitKey(request.ip)}`;
}

/**
 * Every key of one account also spends one shared budget of this many times API_RATE_LIMIT_PER_MINUTE: a
 * merchant may spread load over two keys at full speed, but more keys (at most 50 per mode) buy nothing more.
 */
export const ACCOUNT_RATE_LIMIT_FACTOR = 2;

/** The account's budget spans both modes: test traffic can slow live traffic of the same account, never another's. */
export function accountRateLimitKey(request: FastifyRequest): string {
  return `account:${request.auth?.accountId}`;
}

const isLimited = (request: FastifyRequest) => request.is404 || /^\/v1(\/|$)/.test(request.routeOptions.url ?? '');

async function rateLimitPlugin(app: FastifyInstance, options: { perMinute: number }): Promise<void> {
  await app.register(rateLimit, {
    max: options.perMinute,
    timeWindow: WINDOW_MS,
    keyGenerator: rateLimitKey,
    allowList: (request) => !isLimited(request),
    errorResponseBuilder: (_request, context) =>
      new ApiError('rate_limited', `Too many requests: at most ${context.max} a minute; retry in ${context.after}.`),
  });
  // The account's budget: an app-level onRequest hook, so after the auth plugin's (which names the account) and
  // before the per-key limiter (a route-level hook).
  const perAccount = app.createRateLimit({
    max: options.perMinute * ACCOUNT_RATE_LIMIT_FACTOR,
    timeWindow: WINDOW_MS,
    keyGenerator: accountRateLimitKey,
    allowList: (request) => !request.auth || !isLimited(request),
  });
  app.addHook('onRequest', async (request, reply) => {
    const verdict = await perAccount(request);
    if (verdict.isAllowed || !verdict.isExceeded) return;
    reply
      .header('x-ratelimit-limit', verdict.max)
      .header('x-ratelimit-remaining', 0)
      .header('x-ratelimit-reset', verdict.ttlInSeconds);
    throw new ApiError(
      'rate_limited',
      `Too many requests for this account: at most ${verdict.max} a minute across all its keys; retry in ${verdict.ttlInSeconds} seconds.`,
      {},
      { 'retry-after': String(verdict.ttlInSeconds) },
    );
  });
}

export default fp(rateLimitPlugin, { name: 'rate-limit', dependencies: ['auth'] });
