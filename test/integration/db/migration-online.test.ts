import { readdirSync } from 'node:fs';
import pg from 'pg';
import { runner } from 'node-pg-migrate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateLargeTables } from '../../../bench/large-tables-data';
import { newId } from '../../../src/core/ids';
import { migrate, MIGRATIONS_DIR } from '../../../src/db/migrate';
import { createPool, type Pool } from '../../../src/db/pool';
import { testDatabaseUrl } from '../../helpers/database';
import { waitFor } from '../../helpers/wait';

/**
 * The big-table indexes migration, run for real on the generated tables (at a reduced size) while a writer holds
 * a transaction open on them, as a busy engine always does. An index built the blocking way would queue behind
 * that transaction and every later write would queue behind it; built CONCURRENTLY, the migration waits for the
 * open transaction and new publishes go through meanwhile. Each publish gives up after a lock wait of 5 s, so a
 * blocked one fails the test instead of hanging it.
 */
const BIG_TABLE_INDEXES = '1763780001300_big-table-indexes.js';

describe('the big-table indexes migration on busy tables', () => {
  const url = testDatabaseUrl();
  let pool: Pool;
  let writer: Pool;
  beforeAll(async () => {
    await generateLargeTables(url, 0.002);
    pool = createPool(url, 2);
    writer = new pg.Pool({ connectionString: url, max: 1, options: '-c lock_timeout=5000' });
    // end() lets go of its idle connection before that connection has closed, and the file's database is dropped
    // (WITH FORCE) right after: the session ended then is not this test's failure.
    writer.on('error', () => undefined);
  });
  afterAll(async () => {
    await pool?.end();
    await writer?.end();
  });

  const created = [
    'delivery_attempts_endpoint_failed_idx',
    'delivery_attempts_endpoint_succeeded_idx',
    'delivery_attempts_event_endpoint_idx',
    'endpoint_abandonments_event_idx',
    'events_account_listing_idx',
    'events_account_type_idx',
    'events_created_idx',
  ];
  const replaced = ['delivery_attempts_event_idx', 'events_account_idx', 'events_inserted_idx'];
  /** The valid indexes among those the migration makes or replaces, and whether the attempt-to-event key exists. */
  const schema = async () => ({
    indexes: (
      await pool.query<{ name: string }>(
        `SELECT c.relname AS name FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
        WHERE c.relname = ANY ($1::text[]) AND i.indisvalid ORDER BY 1`,
        [[...created, ...replaced]],
      )
    ).rows.map((r) => r.name),
    attemptEventKey:
      ((await pool.query(`SELECT 1 FROM pg_constraint WHERE conname = 'delivery_attempts_event_id_fkey'`)).rowCount ??
        0) > 0,
  });

  it('builds its indexes while publishes go on', async () => {
    // Back to just before it: it and every migration after it undone.
    const count = readdirSync(MIGRATIONS_DIR).filter((name) => name >= BIG_TABLE_INDEXES).length;
    await runner({
      databaseUrl: url,
      dir: MIGRATIONS_DIR,
      direction: 'down',
      count,
      migrationsTable: 'schema_migrations',
      log: () => undefined,
    });
    expect(await schema()).toEqual({ indexes: replaced, attemptEventKey: true });

    const open = new pg.Client({ connectionString: url });
    await open.connect();
    let migrating: Promise<string[]> | undefined;
    try {
      await open.query('BEGIN');
      await open.query(
        `UPDATE events SET dispatched_at = now() WHERE id = (SELECT id FROM events ORDER BY id LIMIT 1)`,
      );
      await open.query(
        `UPDATE delivery_attempts SET duration_ms = duration_ms WHERE id = (SELECT id FROM delivery_attempts ORDER BY id LIMIT 1)`,
      );
      migrating = migrate(url);
      migrating.catch(() => undefined);
      await waitFor(
        async () =>
          ((
            await pool.query(
              `SELECT 1 FROM pg_stat_activity WHERE query ILIKE 'CREATE INDEX%' AND wait_event_type = 'Lock'`,
            )
          ).rowCount ?? 0) > 0,
        { what: 'the migration to wait for the open transaction' },
      );
      for (let i = 0; i < 5; i++) {
        // A publish's write, in the columns the schema has before this migration (later migrations add more, and
        // the code of today writes them).
        const stored = await writer.query(
          `INSERT INTO events (id, account_id, livemode, type, created, body, endpoint_ids)
           VALUES ($1, 'acct_lt1', false, 'parcel.created', $2, '{"object":"event"}', '{}')`,
          [newId('event'), Math.floor(Date.now() / 1000)],
        );
        expect(stored.rowCount).toBe(1);
        await writer.query(
          `UPDATE delivery_attempts SET duration_ms = duration_ms WHERE id = (SELECT id FROM delivery_attempts ORDER BY id DESC LIMIT 1)`,
        );
      }
      // The migration is still waiting: the publishes went through during it, not after it.
      const state = await Promise.race([
        migrating.then(() => 'done'),
        new Promise((resolve) => setImmediate(() => resolve('running'))),
      ]);
      expect(state).toBe('running');
    } finally {
      await open.query('COMMIT');
      await open.end();
    }
    expect((await migrating)[0]).toBe(BIG_TABLE_INDEXES.replace(/\.js$/, ''));
    expect(await schema()).toEqual({ indexes: created, attemptEventKey: false });
  });
});
