import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Config } from '../../infra/config';

declare module 'fastify' {
  interface FastifyInstance {
    /** Loaded once at start by infra/config.ts; routes and plugins read it from here. */
    config: Config;
  }
}

async function configPlugin(fastify: FastifyInstance, options: { config: Config }): Promise<void> {
  fastify.decorate('config', options.config);
}

export default fp(configPlugin, { name: 'config' });
