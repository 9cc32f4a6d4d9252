import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { createPool, type Pool } from '../../db/pool';

declare module 'fastify' {
  interface FastifyInstance {
    pg: Pool;
  }
}

/**
 * `fastify.pg`: the pool, opened from the config and closed with the app, or the caller's own (tests share one
 * across apps), which stays the caller's to close: whoever opens a resource closes it.
 */
async function pgPlugin(fastify: FastifyInstance, options: { pool?: Pool }): Promise<void> {
  const pool = options.pool ?? createPool(fastify.config.databaseUrl);
  fastify.decorate('pg', pool);
  if (!options.pool) fastify.addHook('onClose', async () => pool.end());
}

export default fp(pgPlugin, { name: 'pg', dependencies: ['config'] });
