import { Client } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import { Pool as HttpPool } from 'undici';
import { buildServer } from '../../src/api/server';
import { RETENTION_BATCH_SIZE } from '../../src/core/delivery-policy';
import { exampleEvent } from '../../src/core/event-schemas';
import { dropDatabase, prepareDatabase } from '../../src/db/migrate';
import { createPool, type Pool } from '../../src/db/pool';
import { createApiKey } from '../../src/domain/api-keys';
import { createSignInLink, openSession } from '../../src/domain/dashboard-sessions';
import type { purgeExpired } from '../../src/domain/retention';
import { forkBenchChild } from '../bench-child';
import { engineConfig, within, type BenchContext } from '../engine';
import {
  ABSENT_TYPE,
  accountId,
  countsAt,
  endpointId,
  endpointsOfAccount,
  generateLargeTables,
  RARE_TYPE,
} from '../large-tables-data';
import {
  comparePlans,
  explainAll,
  explainWrite,
  FULL_SCAN_ROWS,
  recordQueries,
  statementsOf,
} from '../large-tables-plans';
import { dispatchWaiting, type DispatchDeps } from '../../src/domain/outbox';
import type { Config } from '../../src/infra/config';
import { percentile } from '../stats';
import { CLI_ACTOR } from '../../src/domain/audit-log';

/**
 * The API and the developers page on big tables (bench/large-tables-data.ts: at scale 1, 10,000 accounts, 100,000
 * endpoints, 1,000,000 events and 10,000,000 attempts over 60 days; BENCH_LARGE_SCALE=0.01 for a quick run), in a
 * scratch database this scenario creates and drops. Over real HTTP to the API in this process:
 *   reads        each read RUNS times per size, for a tiny, a median and the biggest account (or endpoint), in
 *                turn: p50 and p99 over all of them. Each read's plans are explained per size and must agree,
 *                with no full scan of a big table; the scenario fails otherwise.
 *   outbox       the dispatcher's sweep claims (events, and merchant-asked deliveries) with a backlog waiting
 *                beside the dispatched millions: WAITING_EVENTS events over WAITING_ACCOUNTS accounts (half of
 *                them one account's) and as many resends, explained as they run (rolled back). A claim must read
 *                the waiting rows through their partial indexes, never scan a big table nor sort on disk.
 *   publish      POST /internal/v1/events to the biggest account (20 endpoints), beside the same publish to the
 *                same account in an empty database, in alternating rounds; p99 of each.
 *   retention    the retention job (purgeExpired, the activity's code, with its batch size and a real Temporal
 *                client, in a process of its own as in a worker) deleting everything older than 30 days: events
 *                per second, each with its deliveries, attempts and abandonment records; meanwhile publishes
 *                run one after the other, p99 and the slowest. Before it, the same publishes for as long with
 *                nothing else running: the slowest of those says what the machine stalls without retention.
 * No worker runs: publishing only stores (the outbox), so the figures are the API's and Postgres's.
 */

export interface LargeTablesResult {
  /** The size generated: 1 is 10,000 accounts, 1,000,000 events and 10,000,000 attempts. */
  scale: number;
  reads: Record<string, { p50Ms: number; p99Ms: number }>;
  publishP99Ms: number;
  publishP99MsEmpty: number;
  /** Events deleted per second, each with its deliveries, attempts and abandonment records. */
  retentionRowsPerSecond: number;
  publishP99MsDuringRetention: number;
  /** The slowest publish while retention ran: the rule is that retention never stalls one past STALL_MS. */
  publishMaxMsDuringRetention: number;
  /** The slowest of the same publishes, one after the other for QUIET_SECONDS, before retention: the control. */
  publishMaxMsWithoutRetention: number;
  /** The Postgres settings retention's stalls depend on (dirty buffers, checkpoints forced by WAL), as the server had them. */
  postgresSettings: Record<string, string>;
}

/** Settings of the Postgres server under test that decide how a bulk delete's writes reach the disk. */
const POSTGRES_SETTINGS = [
  'shared_buffers',
  'max_wal_size',
  'checkpoint_timeout',
  'checkpoint_completion_target',
  'wal_compression',
];

const TOKEN = 'bench-internal-token-large-tables-0123';
const RUNS = 100;
const WARMUP = 10;
/** 2,000 publishes a side: a p99 of a few milliseconds over 300 was the 3rd-slowest, and moved by 100% between runs. */
const PUBLISH_ROUNDS = 10;
const PUBLISHES_PER_ROUND = 200;
/** A publish slower than this while retention runs is a stall: the rule is that there are none. */
const STALL_MS = 50;
/** How long the control publishes run: about as long as retention takes at full size. */
const QUIET_SECONDS = 60;
/** The most the retention run may take before the scenario fails. */
const RETENTION_BOUND_MS = 600_000;
const SIZES = ['tiny', 'median', 'biggest'] as const;
/** The outbox backlog the sweep claims are explained with (at scale 1; a smaller scale shrinks it). */
const WAITING_EVENTS = 50_000;
const WAITING_ACCOUNTS = 200;
/** What a claim must read its waiting rows through. */
const CLAIM_INDEXES = { events: 'events_undispatched_account_idx', deliveries: 'deliveries_undispatched_idx' };
type Size = (typeof SIZES)[number];

const round2 = (n: number) => Math.round(n * 100) / 100;
const p = (values: number[], q: number) =>
  round2(
    percentile(
      [...values].sort((a, b) => a - b),
      q,
    ),
  );

interface Request {
  path: string;
  headers: Record<string, string>;
}

/** A tiny, a median and the biggest of some rows counted per key (accounts by events, endpoints by attempts). */
async function bySize(pool: Pool, sql: string): Promise<Record<Size, string>> {
  const { rows } = await pool.query<{ key: string }>(
    `WITH counted AS (${sql}), ranked AS (SELECT key, row_number() OVER (ORDER BY n, key) AS r, count(*) OVER () AS total FROM counted)
     SELECT key FROM ranked WHERE r IN (1, (total + 1) / 2, total) ORDER BY r`,
  );
  const [tiny, median, biggest] = rows.map((r) => r.key);
  if (!tiny || !median || !biggest) throw new Error(`large-tables: no sizes from ${sql}`);
  return { tiny, median, biggest };
}

async function timedRequest(
  http: HttpPool,
  request: Request & { method?: 'GET' | 'POST'; body?: string },
  expect: number,
): Promise<number> {
  const t0 = performance.now();
  const res = await http.request({
    method: request.method ?? 'GET',
    path: request.path,
    headers: request.headers,
    body: request.body,
  });
  await res.body.dump();
  const ms = performance.now() - t0;
  if (res.statusCode !== expect)
    throw new Error(`${request.method ?? 'GET'} ${request.path} answered ${res.statusCode}`);
  return ms;
}

interface Api {
  app: FastifyInstance;
  http: HttpPool;
  pool: Pool;
  databaseUrl: string;
  close(): Promise<void>;
}

async function startApi(ctx: BenchContext, databaseUrl: string, name: string): Promise<Api> {
  const config = engineConfig(ctx, `bench-large-${name}-${ctx.runId}`, {
    DATABASE_URL: databaseUrl,
    INTERNAL_API_TOKEN: TOKEN,
    API_RATE_LIMIT_PER_MINUTE: '1000000',
  });
  const pool = createPool(databaseUrl, 10);
  const app = await buildServer(
    { config, pool, temporal: new Client({ connection: ctx.client.connection }) },
    { logger: false },
  );
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  const http = new HttpPool(address, { connections: 4 });
  return {
    app,
    http,
    pool,
    databaseUrl,
    async close() {
      await http.close();
      await app.close();
      await pool.end();
    },
  };
}

let published = 0;
function publishRequest(): Request & { method: 'POST'; body: string } {
  published += 1;
  const parcel = { ...exampleEvent('parcel.delivered').data.parcel, id: `prc_big_${published}` };
  return {
    method: 'POST',
    path: '/internal/v1/events',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ account_id: accountId(1), livemode: false, type: 'parcel.delivered', data: { parcel } }),
  };
}

/** The reads, per size: who asks (a key or a developers-page session of the account) and what. */
async function readRequests(pool: Pool, origin: string): Promise<Record<string, Record<Size, Request[]>>> {
  const accounts = await bySize(pool, `SELECT account_id AS key, count(*) AS n FROM events GROUP BY account_id`);
  const endpoints = await bySize(pool, `SELECT endpoint_id AS key, count(*) AS n FROM deliveries GROUP BY endpoint_id`);
  // Down endpoints (no attempt ever succeeded): filtering on success finds nothing there.
  const down = await bySize(
    pool,
    `SELECT endpoint_id AS key, count(*) AS n FROM deliveries GROUP BY endpoint_id HAVING bool_and(status = 'failed') AND count(*) > 10`,
  );
  const keys = new Map<string, string>();
  const sessions = new Map<string, string>();
  const accountOf = async (endpoint: string) =>
    (await pool.query<{ account_id: string }>('SELECT account_id FROM webhook_endpoints WHERE id = $1', [endpoint]))
      .rows[0]?.account_id as string;
  const api = async (account: string) => {
    if (!keys.has(account))
      keys.set(
        account,
        (await createApiKey(pool, { accountId: account, mode: 'test', scopes: ['webhooks:manage'] }, CLI_ACTOR)).key,
      );
    return { authorization: `Bearer ${keys.get(account)}` };
  };
  const page = async (account: string) => {
    if (!sessions.has(account)) {
      const link = await createSignInLink(pool, { accountId: account, origin });
      const opened = await openSession(pool, new URL(link.url).pathname.split('/').pop() as string);
      if (!opened) throw new Error('large-tables: the sign-in link did not open a session');
      sessions.set(account, opened.sessionId);
    }
    return { cookie: `parcel_dashboard_session=${sessions.get(account)}` };
  };
  const events = async (account: string) =>
    (
      await pool.query<{ id: string }>(
        `SELECT id FROM events WHERE account_id = $1 AND livemode = false ORDER BY inserted_at DESC, id DESC LIMIT 5`,
        [account],
      )
    ).rows.map((r) => r.id);
  const deep = async (account: string) =>
    (
      await pool.query<{ id: string }>(
        `SELECT id FROM events WHERE account_id = $1 AND livemode = false ORDER BY inserted_at DESC, id DESC
        OFFSET LEAST(10000, (SELECT count(*) - 1 FROM events WHERE account_id = $1)) LIMIT 1`,
        [account],
      )
    ).rows[0]?.id as string;

  const perSize = async (keyed: Record<Size, string>, make: (key: string) => Promise<Request[]>) =>
    Object.fromEntries(await Promise.all(SIZES.map(async (size) => [size, await make(keyed[size])]))) as Record<
      Size,
      Request[]
    >;
  const endpointRead = (keyed: Record<Size, string>, query: string) =>
    perSize(keyed, async (id) => [
      { path: `/v1/webhooks/${id}/deliveries${query}`, headers: await api(await accountOf(id)) },
    ]);
  return {
    eventsFirstPage: await perSize(accounts, async (a) => [{ path: '/v1/events', headers: await api(a) }]),
    eventsDeepPage: await perSize(accounts, async (a) => [
      { path: `/v1/events?starting_after=${await deep(a)}`, headers: await api(a) },
    ]),
    eventsRareType: await perSize(accounts, async (a) => [
      { path: `/v1/events?type=${RARE_TYPE}`, headers: await api(a) },
    ]),
    eventsAbsentType: await perSize(accounts, async (a) => [
      { path: `/v1/events?type=${ABSENT_TYPE}`, headers: await api(a) },
    ]),
    event: await perSize(accounts, async (a) =>
      Promise.all((await events(a)).map(async (id) => ({ path: `/v1/events/${id}`, headers: await api(a) }))),
    ),
    deliveries: await endpointRead(endpoints, ''),
    deliveriesFailed: await endpointRead(endpoints, '?outcome=failed'),
    deliveriesSucceededNone: await endpointRead(down, '?outcome=succeeded'),
    dashboardEvents: await perSize(accounts, async (a) => [{ path: '/dashboard/test/events', headers: await page(a) }]),
    dashboardEvent: await perSize(accounts, async (a) =>
      Promise.all(
        (await events(a)).map(async (id) => ({ path: `/dashboard/test/events/${id}`, headers: await page(a) })),
      ),
    ),
    dashboardEndpoint: await perSize(endpoints, async (id) => [
      { path: `/dashboard/test/endpoints/${id}`, headers: await page(await accountOf(id)) },
    ]),
  };
}

async function measureReads(
  api: Api,
  origin: string,
  log: (line: string) => void,
): Promise<LargeTablesResult['reads']> {
  const recorder = recordQueries(api.pool);
  const requests = await readRequests(api.pool, origin);
  const reads: LargeTablesResult['reads'] = {};
  const problems: string[] = [];
  for (const [name, sized] of Object.entries(requests)) {
    const plans: Record<string, Awaited<ReturnType<typeof explainAll>>> = {};
    for (const size of SIZES) {
      const first = sized[size][0] as Request;
      plans[size] = await explainAll(api.pool, await recorder.record(() => timedRequest(api.http, first, 200)));
    }
    problems.push(...comparePlans(name, plans));
    const times: number[] = [];
    // The database's share of each request: what the indexes decide, apart from the HTTP and rendering around it.
    const inDatabase: number[] = [];
    for (let run = 0; run < WARMUP + RUNS; run++) {
      for (const size of SIZES) {
        const list = sized[size];
        const before = recorder.databaseMs();
        const ms = await timedRequest(api.http, list[run % list.length] as Request, 200);
        if (run >= WARMUP) times.push(ms);
        if (run >= WARMUP) inDatabase.push(recorder.databaseMs() - before);
      }
    }
    reads[name] = { p50Ms: p(times, 50), p99Ms: p(times, 99) };
    log(
      `large-tables: ${name} p50 ${reads[name].p50Ms} ms p99 ${reads[name].p99Ms} ms (database p50 ${p(inDatabase, 50)} ms p99 ${p(inDatabase, 99)} ms); ` +
        `plan ${plans.biggest?.map((x) => x.shape).join(' | ')}`,
    );
  }
  if (problems.length > 0) throw new Error(`large-tables: query plans\n${problems.join('\n')}`);
  return reads;
}

/**
 * The sweep claims on a backlog beside the big tables: a waiting event per `g` (every other one the first
 * account's, the rest spread over WAITING_ACCOUNTS), and a waiting resend of a dispatched event per `g`. Stored,
 * analyzed, each claim explained as it runs and rolled back, then the backlog is removed again.
 */
export async function checkOutboxClaims(
  pool: Pool,
  config: Config,
  scale: number,
  log: (line: string) => void,
): Promise<void> {
  const waiting = Math.max(1_000, Math.round(WAITING_EVENTS * scale));
  const spread = Math.min(WAITING_ACCOUNTS, countsAt(scale).accounts);
  const account = `CASE WHEN g % 2 = 0 THEN 1 ELSE 1 + g % ${spread} END`;
  await pool.query(
    `INSERT INTO events (id, account_id, livemode, type, created, body, endpoint_ids, inserted_at)
     SELECT 'evt_ltw' || g, 'acct_lt' || ${account}, false, 'parcel.created', extract(epoch FROM now())::bigint, '{}',
            ARRAY['we_lt' || ${account} || 'x1'], now() - interval '1 hour' + g * interval '10 ms'
       FROM generate_series(1, $1::int) g`,
    [waiting],
  );
  await pool.query(
    `INSERT INTO deliveries (id, event_id, endpoint_id, account_id, livemode, trigger, created_at, dispatch_after)
     SELECT 'dly_ltw' || g, ev.id, ev.endpoint_ids[1], ev.account_id, false, 'resend', now(), now() - interval '1 minute'
       FROM generate_series(1, $1::int) g JOIN events ev ON ev.id = 'evt_lt' || g`,
    [waiting],
  );
  await pool.query('ANALYZE events, deliveries');
  const problems: string[] = [];
  try {
    const { rows: tables } = await pool.query<{ name: string }>(
      `SELECT relname AS name FROM pg_class WHERE relkind = 'r' AND relnamespace = 'public'::regnamespace AND reltuples > $1`,
      [FULL_SCAN_ROWS],
    );
    const big = new Set(tables.map((t) => t.name));
    // What a dispatcher's sweep sends (no ids), recorded with nothing claimed, so nothing reaches Temporal.
    const sweep = await statementsOf((p) =>
      dispatchWaiting({ pool: p, config, eagerStart: false } as Omit<DispatchDeps, 'temporal'> as DispatchDeps, {
        limit: 100,
      }),
    );
    for (const table of ['events', 'deliveries'] as const) {
      const statement = sweep.find((q) => new RegExp(`^\\s*UPDATE ${table}\\b`, 'im').test(q.text));
      if (!statement) throw new Error(`large-tables: the sweep sent no claim of ${table}`);
      const plan = await explainWrite(pool, statement, big);
      if (plan.seqScans.length > 0) problems.push(`outbox ${table} claim: full scan of ${plan.seqScans.join(', ')}`);
      if (plan.spilled) problems.push(`outbox ${table} claim: a sort spilled to disk`);
      if (!plan.indexes.includes(CLAIM_INDEXES[table]))
        problems.push(`outbox ${table} claim: reads ${plan.indexes.join(', ')}, not ${CLAIM_INDEXES[table]}`);
      log(
        `large-tables: outbox ${table} claim of 100 with ${waiting} waiting ${round2(plan.ms)} ms; plan ${plan.shape}`,
      );
    }
  } finally {
    await pool.query(`DELETE FROM deliveries WHERE id LIKE 'dly\\_ltw%'`);
    await pool.query(`DELETE FROM events WHERE id LIKE 'evt\\_ltw%'`);
    await pool.query('ANALYZE events, deliveries');
  }
  if (problems.length > 0) throw new Error(`large-tables: outbox claim plans\n${problems.join('\n')}`);
}

/** Publishes one after the other while `go(n)` holds (n: publishes so far): the time of each. */
async function publishWhile(api: Api, go: (n: number) => boolean): Promise<number[]> {
  const times: number[] = [];
  while (go(times.length)) times.push(await timedRequest(api.http, publishRequest(), 201));
  return times;
}

const publishTimes = (api: Api, count: number) => publishWhile(api, (n) => n < count);

/** Publish times as the log shows them: p50, p99, the slowest, and how many were stalls. */
function stallLine(times: number[]): string {
  return `p50 ${p(times, 50)} ms p99 ${p(times, 99)} ms max ${p(times, 100)} ms, ${times.filter((ms) => ms > STALL_MS).length} over ${STALL_MS} ms`;
}

/** The Postgres settings under test that decide how a bulk delete's writes reach the disk (POSTGRES_SETTINGS). */
async function postgresSettingsOf(pool: Pool): Promise<Record<string, string>> {
  const { rows } = await pool.query<{ name: string; value: string }>(
    'SELECT name, current_setting(name) AS value FROM pg_settings WHERE name = ANY ($1::text[]) ORDER BY name',
    [POSTGRES_SETTINGS],
  );
  return Object.fromEntries(rows.map((row) => [row.name, row.value]));
}

/** The same account and endpoints as the big database's biggest account, and nothing else. */
async function seedEmpty(pool: Pool): Promise<void> {
  await pool.query(`INSERT INTO accounts (id, name, status) VALUES ($1, 'Large 1', 'active')`, [accountId(1)]);
  const ids = Array.from({ length: endpointsOfAccount(1) }, (_, i) => endpointId(1, i + 1));
  await pool.query(
    `INSERT INTO webhook_endpoints (id, account_id, livemode, url, secret, created_at)
     SELECT id, $2, false, 'https://hooks.example/1/' || n, 'whsec_large', now() - interval '90 days' + n * interval '1 minute'
       FROM unnest($1::text[]) WITH ORDINALITY AS e (id, n)`,
    [ids, accountId(1)],
  );
}

/** The same publish to the same account, on the big database and on the empty one, in alternating rounds. */
async function measurePublish(
  big: Api,
  empty: Api,
  log: (line: string) => void,
): Promise<Pick<LargeTablesResult, 'publishP99Ms' | 'publishP99MsEmpty'>> {
  const onBig: number[] = [];
  const onEmpty: number[] = [];
  await publishTimes(big, 100);
  await publishTimes(empty, 100);
  for (let r = 0; r < PUBLISH_ROUNDS; r++) {
    onEmpty.push(...(await publishTimes(empty, PUBLISHES_PER_ROUND)));
    onBig.push(...(await publishTimes(big, PUBLISHES_PER_ROUND)));
  }
  log(
    `large-tables: publish p50 ${p(onBig, 50)} ms p99 ${p(onBig, 99)} ms; empty database p50 ${p(onEmpty, 50)} ms p99 ${p(onEmpty, 99)} ms`,
  );
  return { publishP99Ms: p(onBig, 99), publishP99MsEmpty: p(onEmpty, 99) };
}

/** Publishes one after the other for `seconds` on the big database with nothing else running: the slowest. */
async function measureQuiet(
  big: Api,
  seconds: number,
  log: (line: string) => void,
): Promise<Pick<LargeTablesResult, 'publishMaxMsWithoutRetention'>> {
  const until = performance.now() + seconds * 1000;
  const quiet = await publishWhile(big, () => performance.now() < until);
  log(`large-tables: ${quiet.length} publishes in ${seconds} s without retention, ${stallLine(quiet)}`);
  return { publishMaxMsWithoutRetention: p(quiet, 100) };
}

type RetentionRun = Awaited<ReturnType<typeof purgeExpired>>;

/**
 * purgeExpired with the activity's batch size, in a process of its own (bench/retention-child.ts), as a worker
 * runs it apart from the API: this process then serves only the publishes.
 */
async function retentionInItsOwnProcess(ctx: BenchContext, databaseUrl: string, cutoff: Date): Promise<RetentionRun> {
  const { child, exited, orExit } = forkBenchChild('retention-child.ts', {
    BENCH_RETENTION: JSON.stringify({
      databaseUrl,
      temporalAddress: ctx.serverAddress,
      cutoffMs: cutoff.getTime(),
      limit: RETENTION_BATCH_SIZE,
    }),
  });
  try {
    const answered = new Promise<RetentionRun>((resolve) =>
      child.once('message', (message) => resolve(message as RetentionRun)),
    );
    // Bounded: the full-size run deletes in under a minute; a stuck child must fail the scenario, not hang it.
    return await within(
      orExit(answered, (code) => `the retention process exited (${code}) without a result`),
      RETENTION_BOUND_MS,
      'retention',
    );
  } finally {
    if (child.exitCode === null) child.kill();
    await exited;
  }
}

/** Retention deletes the oldest 30 days (the activity's code and batch size) while publishes go on, one after the other. */
async function measureRetention(
  ctx: BenchContext,
  big: Api,
  log: (line: string) => void,
): Promise<
  Pick<LargeTablesResult, 'retentionRowsPerSecond' | 'publishP99MsDuringRetention' | 'publishMaxMsDuringRetention'>
> {
  const cutoff = new Date(Date.now() - 30 * 86_400_000);
  let retaining = true;
  const publisher = publishWhile(big, () => retaining);
  const t0 = performance.now();
  let result: RetentionRun;
  let during: number[];
  try {
    result = await retentionInItsOwnProcess(ctx, big.databaseUrl, cutoff);
  } finally {
    retaining = false;
    during = await publisher;
  }
  const seconds = (performance.now() - t0) / 1000;
  const { rows } = await big.pool.query<{ n: number }>('SELECT count(*)::integer AS n FROM events WHERE created < $1', [
    Math.floor(cutoff.getTime() / 1000),
  ]);
  log(
    `large-tables: retention deleted ${result.events} events in ${result.batches} batches, ${round2(seconds)} s (${rows[0]?.n} left older than the cutoff); ` +
      `${during.length} publishes meanwhile, ${stallLine(during)}`,
  );
  return {
    retentionRowsPerSecond: Math.round(result.events / seconds),
    publishP99MsDuringRetention: p(during, 99),
    publishMaxMsDuringRetention: p(during, 100),
  };
}

export async function largeTablesScenario(
  ctx: BenchContext,
  scale: number,
  log: (line: string) => void,
): Promise<LargeTablesResult> {
  if (!(scale > 0)) throw new Error(`large-tables: the scale must be a positive number, got ${scale}`);
  const urlOf = (suffix: string) => {
    const url = new URL(ctx.databaseUrl);
    url.pathname = `${url.pathname}_${suffix}`;
    return url.toString();
  };
  const bigUrl = urlOf('large');
  const emptyUrl = urlOf('large_empty');
  try {
    await prepareDatabase(bigUrl);
    await prepareDatabase(emptyUrl);
    const t0 = performance.now();
    const counts = await generateLargeTables(bigUrl, scale, log);
    log(`large-tables: ${JSON.stringify(counts)} in ${Math.round((performance.now() - t0) / 1000)} s`);
    const big = await startApi(ctx, bigUrl, 'big');
    const empty = await startApi(ctx, emptyUrl, 'empty');
    try {
      await seedEmpty(empty.pool);
      const reads = await measureReads(big, 'http://127.0.0.1', log);
      await checkOutboxClaims(big.pool, engineConfig(ctx, `bench-large-outbox-${ctx.runId}`), scale, log);
      const publish = await measurePublish(big, empty, log);
      const postgresSettings = await postgresSettingsOf(big.pool);
      log(`large-tables: postgres ${JSON.stringify(postgresSettings)}`);
      const quiet = await measureQuiet(big, QUIET_SECONDS * Math.min(1, scale), log);
      const retention = await measureRetention(ctx, big, log);
      return { scale, reads, ...publish, ...quiet, ...retention, postgresSettings };
    } finally {
      await big.close();
      await empty.close();
    }
  } finally {
    await dropDatabase(bigUrl);
    await dropDatabase(emptyUrl);
  }
}
