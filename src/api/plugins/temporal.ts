import type { Client } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { lazyClient } from '../../infra/temporal';

declare module 'fastify' {
  interface FastifyInstance {
    temporal: Client;
  }
}

/**
 * `fastify.temporal`: a client on a lazy connection (the API starts while Temporal is down), closed with the
 * app, or the caller's own, which stays the caller's to close.
 */
async function temporalPlugin(fastify: FastifyInstance, options: { client?: Client }): Promise<void> {
  const client = options.client ?? lazyClient(fastify.config);
  fastify.decorate('temporal', client);
  if (!options.client) fastify.addHook('onClose', async () => client.connection.close());
}

export default fp(temporalPlugin, { name: 'temporal', dependencies: ['config'] });
