import { Client } from '@temporalio/client';
import { Pool as HttpPool } from 'undici';
import { buildServer } from '../../api/server';
import { engineConfig, type BenchContext } from '../engine';
import { costMeters, type Costs } from '../meters';
import { percentile, runSteady, type Summary } from '../stats';
import { newId } from '../../core/ids';

const TOKEN = 'bench-internal-token-0123456789';

export interface PublishApiResult extends Costs {
  concurrency: number;
  summary: Summary;
  /** Where a request's time goes, p50 ms: as the caller saw it, inside Fastify, and inside the Temporal start call. */
  whereTimeGoesP50Ms: { client: number; server: number; temporalStart: number; restOfServer: number };
}

const p50 = (values: number[]) => Math.round(percentile([...values].sort((a, b) => a - b), 50) * 100) / 100;

/**
 * POST /internal/v1/events on its own: the API in this process over real HTTP, publishing to an account with
 * one endpoint. No worker polls the task queue, so the figure is the API's, not the deliveries'. The Temporal
 * client is wrapped to time its start calls and an onResponse hook reads Fastify's own elapsed time.
 */
export async function publishApiScenario(
  ctx: BenchContext,
  server: { pid?: number; metricsUrl?: string },
  steady: { warmupMs: number; windowMs: number },
  concurrency: number,
): Promise<PublishApiResult> {
  const config = engineConfig(ctx, `bench-api-${ctx.runId}-${concurrency}`, { INTERNAL_API_TOKEN: TOKEN, API_RATE_LIMIT_PER_MINUTE: '1000000' });
  const temporal = new Client({ connection: ctx.client.connection });
  const startMs: number[] = [];
  const serverMs: number[] = [];
  const start = temporal.workflow.start.bind(temporal.workflow);
  temporal.workflow.start = (async (...args: Parameters<typeof start>) => {
    const t0 = performance.now();
    try {
      return await start(...args);
    } finally {
      startMs.push(performance.now() - t0);
    }
  }) as typeof start;
  const app = await buildServer({ config, pool: ctx.pool, temporal }, { logger: false });
  app.addHook('onResponse', async (_request, reply) => void serverMs.push(reply.elapsedTime));
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  const http = new HttpPool(address, { connections: concurrency, pipelining: 1 });
  const meters = costMeters(server, ctx.pool);
  try {
    const accountId = newId('account');
    await ctx.pool.query(`INSERT INTO accounts (id, name, status) VALUES ($1, 'Bench', 'active')`, [accountId]);
    await ctx.pool.query(`INSERT INTO webhook_endpoints (id, account_id, livemode, url, secret) VALUES ($1, $2, false, 'https://127.0.0.1:9/unused', 'whsec_x')`, [
      newId('endpoint'),
      accountId,
    ]);
    let windowFrom = { start: 0, server: 0 };
    const summary = await runSteady(
      { ...steady, concurrency },
      async (i) => {
        const body = JSON.stringify({ account_id: accountId, livemode: false, type: 'parcel.created', id: `evt_api_${concurrency}_${accountId.slice(-8)}_${i}`, data: { parcel: { id: `p_${i}`, status: 'CREATED' } } });
        const t0 = performance.now();
        const res = await http.request({ method: 'POST', path: '/internal/v1/events', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body });
        await res.body.dump();
        if (res.statusCode !== 201) throw new Error(`POST /internal/v1/events answered ${res.statusCode}`);
        return performance.now() - t0;
      },
      {
        onStart: async () => {
          windowFrom = { start: startMs.length, server: serverMs.length };
          await meters.onStart?.();
        },
        onEnd: (completed) => meters.onEnd?.(completed) ?? Promise.resolve(),
      },
    );
    const server = p50(serverMs.slice(windowFrom.server));
    const temporalStart = p50(startMs.slice(windowFrom.start));
    return {
      concurrency,
      summary,
      ...meters.costs(),
      whereTimeGoesP50Ms: { client: summary.p50Ms, server, temporalStart: Number.isNaN(temporalStart) ? 0 : temporalStart, restOfServer: Math.round((server - (Number.isNaN(temporalStart) ? 0 : temporalStart)) * 100) / 100 },
    };
  } finally {
    await http.close();
    await app.close();
  }
}
