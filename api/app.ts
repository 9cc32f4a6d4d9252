import type { Client } from '@temporalio/client';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyServerOptions } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Config } from '../infra/config';
import { ApiError } from '../core/errors';
import { randomBase62 } from '../core/ids';
import type { Pool } from '../db/pool';
import { clientErrorHandler, registerErrorHandling } from './errors';
import { serializeRequest } from './logging';
import authPlugin from './plugins/auth';
import jsonOnly from './plugins/content-type';
import docsPlugin from './plugins/docs';
import rateLimitPlugin from './plugins/rate-limit';
import healthRoutes from './routes/health';
import internalEventRoutes from './routes/internal-events';
import townRoutes from './routes/towns';
import { strictTypeBoxCompiler } from './typebox-validator';
import webhookRoutes from './routes/webhooks';

export interface AppDeps {
  config: Config;
  pool: Pool;
  temporal: Client;
}

declare module 'fastify' {
  interface FastifyInstance {
    deps: AppDeps;
  }
}

/** Where keys and secrets could appear in a log line; pino replaces them. */
export const LOG_REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  'authorization',
  'key',
  'secret',
  '*.key',
  '*.secret',
];

export function loggerOptions(config: Config): FastifyServerOptions['logger'] {
  return {
    level: config.logLevel,
    redact: { paths: LOG_REDACT_PATHS, censor: '[redacted]' },
    serializers: { req: serializeRequest },
  };
}

/** The API as a plugin tree; listening and graceful shutdown live in server.ts. */
export async function buildApp(
  deps: AppDeps,
  options: { logger?: FastifyServerOptions['logger'] } = {},
): Promise<FastifyInstance> {
  const app = Fastify({
    logger: options.logger ?? loggerOptions(deps.config),
    bodyLimit: 64 * 1024,
    routerOptions: { maxParamLength: 200 },
    genReqId: () => `req_${randomBase62(20)}`,
    // The router refuses bad percent-encoding and over-long params before any handler or error handler runs;
    // answer those in the same wire shape as every other error.
    frameworkErrors: (_error, request, reply) => {
      const apiError = new ApiError('invalid_request', 'The request URL is malformed or a path parameter is too long.');
      (reply as FastifyReply).header('Request-Id', request.id).status(apiError.status).send(apiError.toBody());
    },
    clientErrorHandler,
  }).withTypeProvider<TypeBoxTypeProvider>();
  // Every route validates with TypeBox: bodies exactly as sent, querystring and params converted strictly.
  app.setValidatorCompiler(strictTypeBoxCompiler);
  app.decorate('deps', deps);
  app.addHook('onSend', async (request, reply) => {
    reply.header('Request-Id', request.id);
  });
  registerErrorHandling(app);
  await app.register(authPlugin, { pool: deps.pool });
  // After auth (they read its verdict), before the routes (they attach to routes as those are added).
  await app.register(jsonOnly);
  await app.register(rateLimitPlugin, { perMinute: deps.config.rateLimitPerMinute });
  await app.register(docsPlugin);
  await app.register(healthRoutes);
  await app.register(townRoutes);
  await app.register(webhookRoutes);
  await app.register(internalEventRoutes);
  return app;
}
