import { Client } from '@temporalio/client';
import { Pool as HttpPool } from 'undici';
import { buildServer } from '../../src/api/server';
import { engineConfig, type BenchContext } from '../engine';
import { costMeters, type Costs, type MeteredServer } from '../meters';
import { percentile, runSteady, type Summary } from '../stats';
import { exampleEvent } from '../../src/core/event-schemas';
import { newId } from '../../src/core/ids';
import { createPool } from '../../src/db/pool';

const TOKEN = 'bench-internal-token-0123456789abcdef';

export interface PublishApiResult extends Costs {
  concurrency: number;
  summary: Summary;
  /** Where a request's time goes, p50 ms: as the caller saw it, inside Fastify, and in the one insert (with its commit). */
  whereTimeGoesP50Ms: { client: number; server: number; insert: number; restOfServer: number };
}

const p50 = (values: number[]) =>
  Math.round(
    percentile(
      [...values].sort((a, b) => a - b),
      50,
    ) * 100,
  ) / 100;

/**
 * POST /internal/v1/events on its own: the API in this process over real HTTP, publishing to an account with
 * one endpoint. Publishing only stores (the outbox): no worker runs here, so the figure is the API's and
 * Postgres's alone. The app's pool is wrapped to time the insert, and an onResponse hook reads Fastify's own
 * elapsed time. The events are marked handed off at the end, so no later phase's dispatcher starts them.
 */
export async function publishApiScenario(
  ctx: BenchContext,
  server: MeteredServer,
  steady: { warmupMs: number; windowMs: number },
  concurrency: number,
): Promise<PublishApiResult> {
  const config = engineConfig(ctx, `bench-api-${ctx.runId}-${concurrency}`, {
    INTERNAL_API_TOKEN: TOKEN,
    API_RATE_LIMIT_PER_MINUTE: '1000000',
  });
  const temporal = new Client({ connection: ctx.client.connection });
  const insertMs: number[] = [];
  const serverMs: number[] = [];
  const pool = createPool(ctx.databaseUrl, 20);
  const query = pool.query.bind(pool) as (...args: unknown[]) => Promise<unknown>;
  // The publish statement is the one that inserts into events; everything else the app asks is timed with the rest.
  (pool as unknown as { query: (...args: unknown[]) => Promise<unknown> }).query = async (...args: unknown[]) => {
    // A prepared statement (src/db/pool.ts) comes as a config object with its text.
    const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: unknown } | undefined)?.text;
    const isInsert = typeof text === 'string' && text.includes('INSERT INTO events');
    const t0 = performance.now();
    try {
      return await query(...args);
    } finally {
      if (isInsert) insertMs.push(performance.now() - t0);
    }
  };
  const app = await buildServer({ config, pool, temporal }, { logger: false });
  app.addHook('onResponse', async (_request, reply) => void serverMs.push(reply.elapsedTime));
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  const http = new HttpPool(address, { connections: concurrency, pipelining: 1 });
  const meters = costMeters(server, ctx.pool);
  try {
    const accountId = newId('account');
    await ctx.pool.query(`INSERT INTO accounts (id, name, status) VALUES ($1, 'Bench', 'active')`, [accountId]);
    await ctx.pool.query(
      `INSERT INTO webhook_endpoints (id, account_id, livemode, url, secret) VALUES ($1, $2, false, 'https://127.0.0.1:9/unused', 'whsec_x')`,
      [newId('endpoint'), accountId],
    );
    let windowFrom = { start: 0, server: 0 };
    const summary = await runSteady(
      { ...steady, concurrency },
      async (i) => {
        const body = JSON.stringify({
          account_id: accountId,
          livemode: false,
          type: 'parcel.created',
          id: `evt_api_${concurrency}_${accountId.slice(-8)}_${i}`,
          data: { parcel: { ...exampleEvent('parcel.created').data.parcel, id: `p_${i}` } },
        });
        const t0 = performance.now();
        const res = await http.request({
          method: 'POST',
          path: '/internal/v1/events',
          headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
          body,
        });
        await res.body.dump();
        if (res.statusCode !== 201) throw new Error(`POST /internal/v1/events answered ${res.statusCode}`);
        return performance.now() - t0;
      },
      {
        onStart: async () => {
          windowFrom = { start: insertMs.length, server: serverMs.length };
          await meters.onStart?.();
        },
        onEnd: (completed) => meters.onEnd?.(completed) ?? Promise.resolve(),
      },
    );
    const server = p50(serverMs.slice(windowFrom.server));
    const insert = p50(insertMs.slice(windowFrom.start));
    await ctx.pool.query('UPDATE events SET dispatched_at = now() WHERE account_id = $1 AND dispatched_at IS NULL', [
      accountId,
    ]);
    return {
      concurrency,
      summary,
      ...meters.costs(),
      whereTimeGoesP50Ms: {
        client: summary.p50Ms,
        server,
        insert,
        restOfServer: Math.round((server - insert) * 100) / 100,
      },
    };
  } finally {
    await http.close();
    await app.close();
    await pool.end();
  }
}
