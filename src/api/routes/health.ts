import type { FastifyInstance } from 'fastify';
import { pingDatabase } from '../../domain/database';

const CHECK_TIMEOUT_MS = 2_000;

function withTimeout<T>(promise: Promise<T>, what: string): Promise<T> {
  return Promise.race([
    promise,
    new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`${what} timed out`)), CHECK_TIMEOUT_MS).unref()),
  ]);
}

export default async function healthRoutes(fastify: FastifyInstance): Promise<void> {
  fastify.get('/healthz', async () => ({ status: 'ok' }));

  fastify.get('/readyz', async (_request, reply) => {
    const [postgres, temporalCheck] = await Promise.allSettled([
      withTimeout(pingDatabase(fastify.pg), 'postgres'),
      withTimeout(fastify.temporal.connection.workflowService.getSystemInfo({}), 'temporal'),
    ]);
    const checks = {
      postgres: postgres.status === 'fulfilled' ? 'ok' : 'unavailable',
      temporal: temporalCheck.status === 'fulfilled' ? 'ok' : 'unavailable',
    };
    const ready = checks.postgres === 'ok' && checks.temporal === 'ok';
    return reply.status(ready ? 200 : 503).send({ status: ready ? 'ready' : 'unavailable', checks });
  });
}
