import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { observeHttpRequest, watchPool } from '../../infra/metrics';

/** Requests no route matched (404s, scanners): one bucket, never the raw URL, which would be a series per URL. */
const UNMATCHED_ROUTE = 'unmatched';

/**
 * Request counts and latency by route pattern (`/v1/webhooks/:id`, never the URL), and the pool's saturation.
 * The page itself is served apart from the API (infra/metrics-server.ts).
 */
async function metricsPlugin(fastify: FastifyInstance): Promise<void> {
  fastify.addHook('onResponse', async (request, reply) => {
    observeHttpRequest({
      method: request.method,
      route: request.routeOptions.url ?? UNMATCHED_ROUTE,
      statusCode: reply.statusCode,
      seconds: reply.elapsedTime / 1000,
    });
  });
  const unwatch = watchPool('api', fastify.pg);
  fastify.addHook('onClose', async () => unwatch());
}

export default fp(metricsPlugin, { name: 'metrics', dependencies: ['pg'] });
