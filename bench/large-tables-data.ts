import pg from 'pg';

/**
 * Big tables for the large-tables scenario, made with SQL (generate_series) in a migrated scratch database:
 * at scale 1, 10,000 accounts, about 100,000 endpoints, 1,000,000 events over the last 60 days, two automatic
 * deliveries per event and five attempts per delivery (10,000,000 attempts), an abandonment record per failed
 * delivery, and the charts' hourly counts of the last 8 days. A smaller `scale` shrinks every count but the
 * shape stays: accounts are skewed (the first has about 5% of all events, the median a few dozen), and so are
 * endpoints (an account's first endpoint gets every event of it, the others share the second delivery).
 *
 * Each delivery's five attempts are the ladder's first five: four failures then a success, or five failures for
 * one delivery in ten; an account's last endpoint (when it has three or more) is down and never succeeds, so a
 * filter on `succeeded` finds nothing there. Kinds: `cod.settled` is rare (one event in a thousand) and
 * `parcel.returned` absent. Rows are written in time order, as the engine writes them.
 */

export interface LargeTablesCounts {
  accounts: number;
  endpoints: number;
  events: number;
  deliveries: number;
  attempts: number;
}

export const RARE_TYPE = 'cod.settled';
export const ABSENT_TYPE = 'parcel.returned';
const DAYS = 60;

export function countsAt(scale: number): LargeTablesCounts {
  const accounts = Math.max(20, Math.round(10_000 * scale));
  const events = Math.max(1_000, Math.round(1_000_000 * scale));
  return { accounts, endpoints: 0, events, deliveries: events * 2, attempts: events * 10 };
}

/** The endpoints of account a: the biggest account has the most allowed (20), the others 2 to 18. */
export const endpointsOfAccount = (a: number) => (a === 1 ? 20 : 2 + ((a * 7) % 17));
export const accountId = (a: number) => `acct_lt${a}`;
export const endpointId = (a: number, n: number) => `we_lt${a}x${n}`;

/**
 * Events from..to placed once each: g, its account a, the account's endpoint count n, the second delivery's
 * endpoint e2, kind t, time at and `created`. Every table's rows are derived from these columns.
 */
function placed(c: LargeTablesCounts, from: number, to: number): string {
  // OFFSET 0 keeps each level a subquery of its own: flattened, every use of a column would compute it again.
  return `(SELECT g, a, n, e2, t, at, floor(extract(epoch FROM at))::bigint AS created FROM (
      SELECT g, a, n, CASE WHEN n = 1 THEN 1 ELSE 2 + (g % (n - 1))::integer END AS e2,
             CASE WHEN b < 200 THEN 'parcel.created' WHEN b < 350 THEN 'parcel.awaiting_dropoff'
                  WHEN b < 550 THEN 'parcel.in_transit' WHEN b < 750 THEN 'parcel.at_pickup_station'
                  WHEN b < 950 THEN 'parcel.delivered' WHEN b < 999 THEN 'parcel.cancelled' ELSE '${RARE_TYPE}' END AS t,
             now() - interval '${DAYS} days' - interval '7 hours' + (g::double precision / ${c.events}) * interval '${DAYS} days' AS at
        FROM (SELECT g, a, CASE WHEN a = 1 THEN 20 ELSE 2 + (a * 7) % 17 END AS n, (g * 7919) % 1000 AS b
                FROM (SELECT g, 1 + floor(${c.accounts} * power(((g * 2654435761) % 4294967296)::double precision / 4294967296.0, 3))::integer AS a
                        FROM generate_series(${from}::bigint, ${to}::bigint) g OFFSET 0) s1 OFFSET 0) s2 OFFSET 0) s3 OFFSET 0) p`;
}

/** Delivery j of a placed event: its endpoint number, and whether its last attempt succeeded (the endpoint is
 * down when it is the account's last of three or more; otherwise one delivery in ten fails). */
const DELIVERY = `LATERAL (SELECT CASE WHEN j = 1 THEN 1 ELSE e2 END AS e) pe,
      LATERAL (SELECT NOT ((n >= 3 AND e = n) OR (g + j) % 10 = 0) AS succeeds) ps`;

const BODY = `'{"id":"evt_lt' || g || '","object":"event","type":"' || t || '","created":' || created || ',"data":' ||
  CASE WHEN t = '${RARE_TYPE}'
       THEN '{"parcel":{"id":"prc_lt' || g || '","parcel_number":"PN' || (100000000 + g) || '"},"cod_settlement":{"id":"cod_lt' || g || '","amount":1250,"currency":"KES","settled_at":' || created || '}}}'
       ELSE '{"parcel":{"id":"prc_lt' || g || '","parcel_number":"PN' || (100000000 + g) || '","tracking_number":"TRK' || (500000000 + g) || '","status":"IN_TRANSIT","payment_status":"PAID","total_fee":350,"currency":"KES","description":"Two pairs of shoes and a phone case","package_size":"S","recipient_name":"Wanjiru Kamau","pickup_run_id":"run_lt' || (g / 40) || '"}}}' END`;

const BIG_TABLES = `('events'::regclass, 'deliveries'::regclass, 'delivery_attempts'::regclass)`;

interface Saved {
  keys: { table: string; name: string; def: string }[];
  foreignKeys: { table: string; name: string; def: string }[];
  indexes: string[];
}

/** Loading into bare heaps and building each index once, sorted, is many times faster than row by row. */
async function dropIndexesAndKeys(client: pg.Client): Promise<Saved> {
  const constraints = async (where: string) =>
    (
      await client.query<{ table: string; name: string; def: string }>(
        `SELECT conrelid::regclass::text AS table, conname AS name, pg_get_constraintdef(oid) AS def FROM pg_constraint WHERE ${where} ORDER BY oid`,
      )
    ).rows;
  const foreignKeys = await constraints(`contype = 'f' AND (conrelid IN ${BIG_TABLES} OR confrelid IN ${BIG_TABLES})`);
  const keys = await constraints(`contype IN ('p', 'u') AND conrelid IN ${BIG_TABLES}`);
  const { rows } = await client.query<{ name: string; def: string }>(
    `SELECT i.indexrelid::regclass::text AS name, pg_get_indexdef(i.indexrelid) AS def FROM pg_index i
      WHERE i.indrelid IN ${BIG_TABLES} AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid)`,
  );
  for (const k of [...foreignKeys, ...keys]) await client.query(`ALTER TABLE ${k.table} DROP CONSTRAINT ${k.name}`);
  for (const index of rows) await client.query(`DROP INDEX ${index.name}`);
  return { keys, foreignKeys, indexes: rows.map((r) => r.def) };
}

async function restoreIndexesAndKeys(client: pg.Client, saved: Saved): Promise<void> {
  for (const k of saved.keys) await client.query(`ALTER TABLE ${k.table} ADD CONSTRAINT ${k.name} ${k.def}`);
  for (const def of saved.indexes) await client.query(def);
  for (const k of saved.foreignKeys) await client.query(`ALTER TABLE ${k.table} ADD CONSTRAINT ${k.name} ${k.def}`);
}

/** Work in slices so no statement holds millions of rows in one sort or one WAL burst. */
async function inSlices(
  client: pg.Client,
  total: number,
  slice: number,
  sql: (from: number, to: number) => string,
): Promise<void> {
  for (let from = 1; from <= total; from += slice) await client.query(sql(from, Math.min(total, from + slice - 1)));
}

/**
 * Fills the migrated database at `databaseUrl`. Triggers and foreign-key checks are off while loading (the rows
 * are consistent by construction, and the engine's triggers would do per-row work the engine did at the time),
 * and the secondary indexes of the three big tables are dropped first and rebuilt after, as they were defined.
 */
export async function generateLargeTables(
  databaseUrl: string,
  scale: number,
  log: (line: string) => void = () => undefined,
): Promise<LargeTablesCounts> {
  const c = countsAt(scale);
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(
      `SET session_replication_role = replica; SET maintenance_work_mem = '256MB'; SET synchronous_commit = off`,
    );
    const schema = await dropIndexesAndKeys(client);
    await client.query(
      `INSERT INTO accounts (id, name, status) SELECT 'acct_lt' || a, 'Large ' || a, 'active' FROM generate_series(1, ${c.accounts}) a`,
    );
    await client.query(
      `INSERT INTO webhook_endpoints (id, account_id, livemode, url, secret, created_at)
       SELECT 'we_lt' || a || 'x' || n, 'acct_lt' || a, false, 'https://hooks.example/' || a || '/' || n, 'whsec_large', now() - interval '90 days' + n * interval '1 minute'
         FROM generate_series(1, ${c.accounts}) a, generate_series(1, CASE WHEN a = 1 THEN 20 ELSE 2 + (a * 7) % 17 END) n`,
    );
    log(`large-tables: accounts and endpoints`);
    await inSlices(
      client,
      c.events,
      250_000,
      (from, to) =>
        `INSERT INTO events (id, account_id, livemode, type, created, body, endpoint_ids, inserted_at, dispatched_at)
       SELECT 'evt_lt' || g, 'acct_lt' || a, false, t, created, ${BODY}, ARRAY['we_lt' || a || 'x1', 'we_lt' || a || 'x' || e2], at, at
         FROM ${placed(c, from, to)}`,
    );
    log(`large-tables: ${c.events} events`);
    await inSlices(
      client,
      c.events,
      250_000,
      (from, to) =>
        `INSERT INTO deliveries (id, event_id, endpoint_id, account_id, livemode, trigger, status, reason, attempts, last_status_code,
                               last_attempt_at, created_at, dispatch_after)
       SELECT 'dly_lt' || g || 'x' || j, 'evt_lt' || g, 'we_lt' || a || 'x' || e, 'acct_lt' || a, false, 'automatic',
              CASE WHEN succeeds THEN 'succeeded' ELSE 'failed' END, CASE WHEN succeeds THEN NULL ELSE 'attempts_exhausted' END, 5,
              CASE WHEN succeeds THEN 200 ELSE 500 END, at + interval '71 minutes 10 seconds', at, at
         FROM ${placed(c, from, to)}, generate_series(1, 2) j, ${DELIVERY}`,
    );
    log(`large-tables: ${c.deliveries} deliveries`);
    // Attempt k of a delivery after the ladder's delays: 0, 10 s, 1 min 10 s, 11 min 10 s, 1 h 11 min 10 s.
    await inSlices(
      client,
      c.events,
      250_000,
      (from, to) =>
        `INSERT INTO delivery_attempts (id, endpoint_id, event_id, event_type, account_id, livemode, attempt, status_code,
                                      response_body, error, duration_ms, succeeded, created_at, delivery_id)
       SELECT 'dlv_lt' || g || 'x' || j || 'x' || k, 'we_lt' || a || 'x' || e, 'evt_lt' || g, t, 'acct_lt' || a, false, k,
              CASE WHEN ok THEN 200 WHEN k % 2 = 0 THEN NULL ELSE 500 END,
              CASE WHEN ok THEN '{"received":true}' WHEN k % 2 = 0 THEN NULL ELSE 'Internal Server Error' END,
              CASE WHEN ok OR k % 2 = 1 THEN NULL ELSE 'timeout' END,
              CASE WHEN ok OR k % 2 = 1 THEN 20 + (g * 7919 + k) % 400 ELSE 10000 END, ok,
              at + (ARRAY[0, 10, 70, 670, 4270])[k] * interval '1 second', 'dly_lt' || g || 'x' || j
         FROM ${placed(c, from, to)}, generate_series(1, 2) j, ${DELIVERY}, generate_series(1, 5) k,
              LATERAL (SELECT k = 5 AND succeeds AS ok) o`,
    );
    log(`large-tables: ${c.attempts} attempts`);
    await client.query(
      `INSERT INTO endpoint_abandonments (endpoint_id, event_id, abandoned_at, counted, created_at)
       SELECT endpoint_id, event_id, last_attempt_at, true, last_attempt_at FROM deliveries WHERE status = 'failed'
       ON CONFLICT DO NOTHING`,
    );
    await client.query(
      `INSERT INTO delivery_hourly_stats (endpoint_id, hour, shard, account_id, livemode, succeeded, failed, abandoned, latency_histogram)
       SELECT endpoint_id, date_trunc('hour', created_at, 'UTC'), 0, min(account_id), false,
              count(*) FILTER (WHERE succeeded), count(*) FILTER (WHERE NOT succeeded AND attempt < 5), count(*) FILTER (WHERE NOT succeeded AND attempt = 5),
              array_fill(0, ARRAY[18])
         FROM delivery_attempts WHERE created_at >= now() - interval '8 days'
        GROUP BY 1, 2`,
    );
    await restoreIndexesAndKeys(client, schema);
    log(`large-tables: indexes and keys rebuilt`);
    await client.query('SET session_replication_role = DEFAULT');
    await client.query('VACUUM ANALYZE');
    // The load wrote gigabytes of WAL: its dirty pages are flushed now, so that no measurement pays for the bulk
    // load's checkpoints (a service's tables grow over months, not in the minute before a retention run).
    await client.query('CHECKPOINT');
    const { rows } = await client.query<{ endpoints: number }>(
      'SELECT count(*)::integer AS endpoints FROM webhook_endpoints',
    );
    return { ...c, endpoints: rows[0]?.endpoints ?? 0 };
  } finally {
    await client.end();
  }
}
