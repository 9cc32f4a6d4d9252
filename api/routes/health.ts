import type { FastifyInstance } from 'fastify';

const CHECK_TIMEOUT_MS = 2_000;

function withTimeout<T>(promise: Promise<T>, what: string): Promise<T> {
  return Promise.race([
    promise,
    new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`${what} timed out`)), CHECK_TIMEOUT_MS).unref()),
  ]);
}

export default async function healthRoutes(app: FastifyInstance): Promise<void> {
  app.get('/healthz', async () => ({ status: 'ok' }));

  app.get('/readyz', async (_request, reply) => {
    const { pool, temporal } = app.deps;
    const [postgres, temporalCheck] = await Promise.allSettled([
      withTimeout(pool.query('SELECT 1'), 'postgres'),
      withTimeout(temporal.connection.workflowService.getSystemInfo({}), 'temporal'),
    ]);
    const checks = {
      postgres: postgres.status === 'fulfilled' ? 'ok' : 'unavailable',
      temporal: temporalCheck.status === 'fulfilled' ? 'ok' : 'unavailable',
    };
    const ready = checks.postgres === 'ok' && checks.temporal === 'ok';
    return reply.status(ready ? 200 : 503).send({ status: ready ? 'ready' : 'unavailable', checks });
  });
}
