import pg from 'pg';

export type Pool = pg.Pool;

// bigint columns (events.created) are Unix seconds, well inside Number's safe range.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

export function createPool(databaseUrl: string, max = 10): pg.Pool {
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max,
    connectionTimeoutMillis: 5_000,
    // Without keepalive a connection whose peer vanished (failover, partition) is held until TCP gives up,
    // minutes later; probes find it dead in seconds so the pool replaces it.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  });
  // An idle client losing its connection (database restart) must not crash the process.
  pool.on('error', () => undefined);
  return pool;
}

/**
 * A statement Postgres parses and plans once per connection instead of on every call (a named prepared
 * statement: node-postgres prepares it on a connection's first use and then only binds and executes). For the
 * delivery path's queries, large CTEs run several times per delivery, this roughly halves Postgres' CPU per
 * delivery (docs/performance.md, "Statements"). Names are global to a
 * connection, so one name must never stand for two texts: a second registration with another text throws at
 * module load, not in the middle of a delivery. Needs a session per client (no transaction-pooling proxy between).
 */
export interface PreparedStatement {
  readonly name: string;
  readonly text: string;
}

const preparedTexts = new Map<string, string>();

export function preparedStatement(name: string, text: string): PreparedStatement {
  const known = preparedTexts.get(name);
  if (known !== undefined && known !== text)
    throw new Error(`prepared statement ${name} is already defined with another text`);
  preparedTexts.set(name, text);
  return { name, text };
}

/** A pool or one of its clients inside a transaction: repositories run their SQL on either. */
export type Db = pg.Pool | pg.PoolClient;

/** Runs `work` in one transaction on one client: committed when it resolves, rolled back when it throws. */
export async function withTransaction<T>(pool: pg.Pool, work: (tx: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

/**
 * `work` in the caller's transaction when `db` is a client (one the caller holds inside withTransaction), or in a
 * transaction of its own on a pool: a repository's multi-statement write that may also be one step of a larger
 * change (the change and its audit entry, domain/audit-log.ts).
 */
export async function inTransaction<T>(db: Db, work: (tx: pg.PoolClient) => Promise<T>): Promise<T> {
  return db instanceof pg.Pool ? withTransaction(db, work) : work(db);
}
