/**
 * Per-request cost of authentication: the same trivial handler with and without a scope, over HTTP against a
 * listening server, plus GET /v1/towns (auth + rate limit + a query) for scale. Not a test: it prints numbers.
 *
 *   npx tsx bench/auth.ts [requests=5000] [concurrency=8]
 *
 * Uses its own scratch database next to DATABASE_URL (default the local server) and drops it at the end.
 */
import { randomBytes } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { Pool as HttpPool } from 'undici';
import { buildServer } from '../src/api/server';
import { loadConfig } from '../src/infra/config';
import { ALL_SCOPES } from '../src/core/scopes';
import { createAccount } from '../src/domain/accounts';
import { createApiKey } from '../src/domain/api-keys';
import { dropDatabase, prepareDatabase } from '../src/db/migrate';
import { createPool } from '../src/db/pool';
import { CLI_ACTOR } from '../src/domain/audit-log';

const REQUESTS = Number(process.argv[2] ?? 5000);
const CONCURRENCY = Number(process.argv[3] ?? 8);
const WARMUP = 500;

interface Result {
  name: string;
  perSecond: number;
  microsPerRequest: number;
}

async function run(
  http: HttpPool,
  name: string,
  path: string,
  headers: Record<string, string>,
  count: number,
): Promise<Result> {
  let next = 0;
  const worker = async () => {
    while (next < count) {
      next += 1;
      const res = await http.request({ method: 'GET', path, headers });
      await res.body.dump();
      if (res.statusCode !== 200) throw new Error(`${name}: ${path} answered ${res.statusCode}`);
    }
  };
  const started = process.hrtime.bigint();
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  return { name, perSecond: count / seconds, microsPerRequest: (seconds * 1e6) / count };
}

async function main(): Promise<void> {
  const base = new URL(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
  base.pathname = `/pw_bench_auth_${randomBytes(3).toString('hex')}`;
  const databaseUrl = base.toString();
  await prepareDatabase(databaseUrl);
  const config = loadConfig({
    DATABASE_URL: databaseUrl,
    TEMPORAL_ADDRESS: '127.0.0.1:1',
    LOG_LEVEL: 'silent',
    API_RATE_LIMIT_PER_MINUTE: '1000000',
  });
  const pool = createPool(databaseUrl);
  const connection = Connection.lazy({ address: '127.0.0.1:1' });
  const app = await buildServer({ config, pool, temporal: new Client({ connection }) }, { logger: false });
  app.get('/bench/open', async () => ({ ok: true }));
  app.get('/bench/authenticated', { config: { scope: 'network:read' } }, async () => ({ ok: true }));
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  const http = new HttpPool(address, { connections: CONCURRENCY, pipelining: 1 });
  try {
    const account = await createAccount(pool, { name: 'Bench', status: 'active' });
    const { key } = await createApiKey(
      pool,
      { accountId: account.id, mode: 'live', scopes: [...ALL_SCOPES] },
      CLI_ACTOR,
    );
    const auth = { authorization: `Bearer ${key}` };
    const basic = { authorization: `Basic ${Buffer.from(`${key}:`).toString('base64')}` };
    const bad = { authorization: `Bearer svc_live_${'x'.repeat(32)}` };

    for (const [path, headers] of [
      ['/bench/open', {}],
      ['/bench/authenticated', auth],
      ['/v1/towns', auth],
    ] as const) {
      await run(http, 'warmup', path, headers, WARMUP);
    }
    const results: Result[] = [];
    // Alternating rounds so a noisy neighbour on a shared machine hits both sides alike.
    for (let round = 0; round < 2; round += 1) {
      results.push(await run(http, 'open (no auth)', '/bench/open', {}, REQUESTS));
      results.push(await run(http, 'authenticated (Bearer)', '/bench/authenticated', auth, REQUESTS));
      results.push(await run(http, 'authenticated (Basic)', '/bench/authenticated', basic, REQUESTS));
      results.push(await run(http, 'GET /v1/towns', '/v1/towns', auth, REQUESTS));
    }
    let rejected = 0;
    const started = process.hrtime.bigint();
    for (let i = 0; i < 1000; i += 1) {
      const res = await http.request({ method: 'GET', path: '/bench/authenticated', headers: bad });
      await res.body.dump();
      if (res.statusCode === 401) rejected += 1;
    }
    const badMicros = Number(process.hrtime.bigint() - started) / 1e3 / 1000;

    const best = new Map<string, Result>();
    for (const r of results)
      if (!best.has(r.name) || (best.get(r.name) as Result).perSecond < r.perSecond) best.set(r.name, r);
    const open = best.get('open (no auth)') as Result;
    console.log(
      `\n${REQUESTS} requests x 2 rounds (best shown), concurrency ${CONCURRENCY}, ${address}, node ${process.version}`,
    );
    console.log('route                      req/s    µs/req   vs open');
    for (const r of best.values()) {
      console.log(
        `${r.name.padEnd(24)} ${r.perSecond.toFixed(0).padStart(7)} ${r.microsPerRequest.toFixed(1).padStart(9)}   ${(open.perSecond / r.perSecond).toFixed(2)}x`,
      );
    }
    const authed = best.get('authenticated (Bearer)') as Result;
    console.log(
      `\nauthentication adds ~${(authed.microsPerRequest - open.microsPerRequest).toFixed(1)} µs per request at this concurrency`,
    );
    console.log(
      `unknown key, sequential: ${rejected}/1000 rejected with 401, ${badMicros.toFixed(0)} µs each (latency, not throughput)`,
    );
  } finally {
    await http.close();
    await app.close();
    await connection.close().catch(() => undefined);
    await pool.end();
    await dropDatabase(databaseUrl);
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
