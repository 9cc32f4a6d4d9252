import { dropDatabase, prepareDatabase } from '../../src/db/migrate';
import { createPool, type Pool } from '../../src/db/pool';
import { endpointHealth, endpointLatency, endpointsLastDay } from '../../src/domain/delivery-stats';
import type { BenchContext } from '../engine';

/**
 * The developers page's chart queries on big tables: a scratch database filled with SQL (generate_series) with
 * 10,000 accounts, 100,000 endpoints and `attempts` attempts over 60 days, a fifth of them to five heavy endpoints
 * of one account that has the most endpoints allowed (100), and the hourly counts those attempts leave in
 * delivery_hourly_stats (eight shards per endpoint hour, as insertAttempt spreads them) for the 8 days
 * retention keeps. Each query runs
 * `RUNS` times, alternating heavy and ordinary endpoints; p99 per query. `rawAttempts7d` is the same week read
 * from the attempts through their index instead of the hourly counts, for comparison.
 */

export interface ChartsResult {
  attempts: number;
  statsRows: number;
  generateSeconds: number;
  p99Ms: Record<string, number>;
  p50Ms: Record<string, number>;
}

const RUNS = 200;
const ENDPOINTS = 100_000;
const ACCOUNTS = 10_000;
const HEAVY = 5;
const SHARDS = 8;
const BOUNDS = '25, 50, 75, 100, 150, 200, 300, 400, 500, 750, 1000, 1500, 2000, 3000, 5000, 7500, 10000';

/** Endpoint g's account: the first 100 endpoints are the big account's, the rest spread over the others. */
const ACCOUNT_OF = (g: string) => `'acct_b' || CASE WHEN ${g} <= 100 THEN 1 ELSE 2 + (${g} % ${ACCOUNTS - 1}) END`;
/** Attempt g's endpoint: every fifth attempt to one of the heavy endpoints, the others spread over all. */
const ENDPOINT_OF = (g: string) =>
  `CASE WHEN ${g} % 5 = 0 THEN 1 + (${g} / 5) % ${HEAVY} ELSE 1 + ((${g}::bigint * 2654435761) % ${ENDPOINTS}) END`;

async function generate(pool: Pool, attempts: number): Promise<number> {
  await pool.query(
    `INSERT INTO accounts (id, name, status) SELECT 'acct_b' || g, 'Bench ' || g, 'active' FROM generate_series(1, ${ACCOUNTS}) g`,
  );
  await pool.query(
    `INSERT INTO webhook_endpoints (id, account_id, livemode, url, secret)
     SELECT 'we_b' || g, ${ACCOUNT_OF('g')}, false, 'https://bench.example/' || g, 'whsec_bench' FROM generate_series(1, ${ENDPOINTS}) g`,
  );
  // Scratch rows: attempts without their events and deliveries, so their foreign keys go first, and so do the
  // constraints and indexes no chart reads (loading is several times faster); the endpoint index stays for
  // rawAttempts7d.
  await pool.query(`DO $$ DECLARE c record; BEGIN
    FOR c IN SELECT conname FROM pg_constraint WHERE conrelid = 'delivery_attempts'::regclass AND contype IN ('f', 'p', 'u') LOOP
      EXECUTE format('ALTER TABLE delivery_attempts DROP CONSTRAINT %I CASCADE', c.conname);
    END LOOP; END $$`);
  await pool.query('DROP INDEX IF EXISTS delivery_attempts_event_idx');
  const batch = 1_000_000;
  for (let from = 1; from <= attempts; from += batch) {
    const to = Math.min(attempts, from + batch - 1);
    // About 93% answered 2xx, 5% failed and retried, 2% abandoned; response times from 20 ms to about 2 s.
    await pool.query(
      `INSERT INTO delivery_attempts (id, endpoint_id, event_id, event_type, account_id, livemode, attempt, status_code,
                                      response_body, error, duration_ms, succeeded, created_at, delivery_id)
       SELECT 'atmpt_b' || g, 'we_b' || e, 'evt_b' || g, 'parcel.delivered', ${ACCOUNT_OF('e')}, false, 1,
              CASE WHEN g % 100 < 93 THEN 200 ELSE 500 END, NULL, NULL, 20 + (g * 7919) % 400 + CASE WHEN g % 50 = 0 THEN 1500 ELSE 0 END,
              g % 100 < 93, now() - ((g * 104729) % 5184000) * interval '1 second', 'dly_b' || g
         FROM generate_series(${from}::bigint, ${to}::bigint) g, LATERAL (SELECT ${ENDPOINT_OF('g')} AS e) pick`,
    );
  }
  await pool.query(
    `INSERT INTO delivery_hourly_stats (endpoint_id, hour, shard, account_id, livemode, succeeded, failed, abandoned, latency_histogram)
     SELECT endpoint_id, hour, shard, min(account_id), false,
            count(*) FILTER (WHERE succeeded), count(*) FILTER (WHERE NOT succeeded AND NOT abandoned), count(*) FILTER (WHERE abandoned),
            ARRAY[${Array.from({ length: 18 }, (_, i) => `count(*) FILTER (WHERE bucket = ${i + 1})`).join(', ')}]::integer[]
       FROM (SELECT endpoint_id, date_trunc('hour', created_at, 'UTC') AS hour, (substr(id, 8)::bigint % ${SHARDS})::smallint AS shard,
                    account_id, succeeded, NOT succeeded AND substr(id, 8)::bigint % 100 >= 98 AS abandoned,
                    width_bucket(duration_ms, ARRAY[${BOUNDS}]) + 1 AS bucket
               FROM delivery_attempts WHERE created_at >= now() - interval '8 days') a
      GROUP BY endpoint_id, hour, shard`,
  );
  await pool.query('ANALYZE delivery_attempts');
  await pool.query('VACUUM ANALYZE delivery_hourly_stats');
  const { rows } = await pool.query<{ n: number }>('SELECT count(*)::integer AS n FROM delivery_hourly_stats');
  return rows[0]?.n ?? 0;
}

async function timed(runs: number, query: (run: number) => Promise<unknown>): Promise<{ p50: number; p99: number }> {
  const times: number[] = [];
  for (let run = 0; run < runs; run++) {
    const t0 = performance.now();
    await query(run);
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  const at = (q: number) =>
    Math.round((times[Math.min(times.length - 1, Math.ceil(q * times.length) - 1)] ?? 0) * 100) / 100;
  return { p50: at(0.5), p99: at(0.99) };
}

/** Heavy endpoints on even runs, an ordinary one on odd runs. */
const endpointFor = (run: number) =>
  run % 2 === 0 ? `we_b${1 + ((run / 2) % HEAVY)}` : `we_b${1000 + ((run * 7919) % (ENDPOINTS - 1000))}`;

export async function chartsScenario(
  ctx: BenchContext,
  attempts: number,
  log: (message: string) => void,
): Promise<ChartsResult> {
  const url = new URL(ctx.databaseUrl);
  url.pathname = `${url.pathname}_charts`;
  const databaseUrl = url.toString();
  await prepareDatabase(databaseUrl);
  const pool = createPool(databaseUrl, 4);
  try {
    const t0 = performance.now();
    const statsRows = await generate(pool, attempts);
    const generateSeconds = Math.round((performance.now() - t0) / 100) / 10;
    log(`charts: ${attempts} attempts and ${statsRows} hourly rows in ${generateSeconds} s`);
    const bigAccount = Array.from({ length: 100 }, (_, i) => `we_b${i + 1}`);
    const now = new Date();
    const week = new Date(now.getTime() - 7 * 86_400_000);
    const queries: Record<string, (run: number) => Promise<unknown>> = {
      chart24h: (run) => endpointHealth(pool, endpointFor(run), '24h', now),
      chart7d: (run) => endpointHealth(pool, endpointFor(run), '7d', now),
      overview: () => endpointsLastDay(pool, bigAccount, now),
      summary7d: (run) => endpointLatency(pool, endpointFor(run), '7d', now),
      rawAttempts7d: (run) =>
        pool.query(
          `SELECT date_trunc('hour', created_at, 'UTC') AS hour, count(*) FILTER (WHERE succeeded) AS succeeded, count(*) FILTER (WHERE NOT succeeded) AS failed,
                  percentile_cont(0.5) WITHIN GROUP (ORDER BY duration_ms) AS p50, percentile_cont(0.95) WITHIN GROUP (ORDER BY duration_ms) AS p95
             FROM delivery_attempts WHERE endpoint_id = $1 AND created_at >= $2 GROUP BY GROUPING SETS ((1), ())`,
          [endpointFor(run), week],
        ),
    };
    const p99Ms: Record<string, number> = {};
    const p50Ms: Record<string, number> = {};
    for (const [name, query] of Object.entries(queries)) {
      await timed(20, query);
      const { p50, p99 } = await timed(RUNS, query);
      p99Ms[name] = p99;
      p50Ms[name] = p50;
      log(`charts: ${name} p50 ${p50} ms p99 ${p99} ms`);
    }
    return { attempts, statsRows, generateSeconds, p99Ms, p50Ms };
  } finally {
    await pool.end();
    await dropDatabase(databaseUrl);
  }
}
