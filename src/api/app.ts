import type { Client } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import type { Pool } from '../db/pool';
import type { Config } from '../infra/config';
import { CredentialFailures, INTERNAL_TOKEN_FAILURES_PER_MINUTE } from '../infra/credential-failures';
import { registerErrorHandling, registerNotFound } from './errors';
import { gateInternalRoutes } from './internal-port';
import authPlugin from './plugins/auth';
import configPlugin from './plugins/config';
import jsonOnly from './plugins/content-type';
import docsPlugin from './plugins/docs';
import metricsPlugin from './plugins/metrics';
import pgPlugin from './plugins/pg';
import rateLimitPlugin from './plugins/rate-limit';
import temporalPlugin from './plugins/temporal';
import tracingPlugin from './plugins/tracing';
import dashboardPlugin from '../dashboard/plugin';
import auditLogRoutes from './routes/audit-log';
import eventRoutes from './routes/events';
import healthRoutes from './routes/health';
import internalDashboardSessionRoutes from './routes/internal-dashboard-sessions';
import internalEventRoutes from './routes/internal-events';
import internalOperationalWebhookRoutes from './routes/internal-operational-webhooks';
import internalParcelRoutes from './routes/internal-parcels';
import townRoutes from './routes/towns';
import webhookRoutes from './routes/webhooks';
import { strictTypeBoxCompiler } from './typebox-validator';

export interface AppOptions {
  config: Config;
  /** The caller's own pool (tests share one); opened from the config, and closed with the app, when absent. */
  pool?: Pool;
  /** The caller's own Temporal client; a lazy one from the config when absent. */
  temporal?: Client;
}

/**
 * The API as one plugin (fastify/demo's app.ts): resources as decorators, then auth, the plugins that read its
 * verdict, and one plugin per resource's routes. The instance, listening and shutdown are api/server.ts's.
 */
export default async function app(fastify: FastifyInstance, options: AppOptions): Promise<void> {
  // Every route validates with TypeBox: bodies exactly as sent, querystring and params converted strictly.
  fastify.setValidatorCompiler(strictTypeBoxCompiler);
  // On an https PUBLIC_URL browsers are told to use https only, for a year, subdomains included.
  const hsts = options.config.publicUrl?.startsWith('https:') ? 'max-age=31536000; includeSubDomains' : undefined;
  fastify.addHook('onSend', async (request, reply) => {
    reply.header('Request-Id', request.id);
    if (hsts) reply.header('Strict-Transport-Security', hsts);
  });
  await fastify.register(configPlugin, { config: options.config });
  await fastify.register(pgPlugin, { pool: options.pool });
  await fastify.register(metricsPlugin);
  await fastify.register(tracingPlugin);
  await fastify.register(temporalPlugin, { client: options.temporal });
  registerErrorHandling(fastify);
  gateInternalRoutes(fastify, options.config.internalPort);
  await fastify.register(authPlugin);
  // After auth (they read its verdict), before the routes (they attach to routes as those are added).
  await fastify.register(jsonOnly);
  await fastify.register(rateLimitPlugin, { perMinute: options.config.rateLimitPerMinute });
  registerNotFound(fastify);
  await fastify.register(docsPlugin);
  await fastify.register(healthRoutes);
  await fastify.register(townRoutes);
  await fastify.register(webhookRoutes);
  await fastify.register(eventRoutes);
  await fastify.register(auditLogRoutes);
  fastify.decorate(
    'internalTokenFailures',
    new CredentialFailures(INTERNAL_TOKEN_FAILURES_PER_MINUTE, 60_000, 'internal tokens'),
  );
  await fastify.register(internalEventRoutes);
  await fastify.register(internalDashboardSessionRoutes);
  await fastify.register(internalOperationalWebhookRoutes);
  await fastify.register(internalParcelRoutes);
  // The developers page: its own HTML errors, form parsing and session checks, encapsulated in its plugin.
  await fastify.register(dashboardPlugin);
}
