import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';
import { dropDatabase } from '../../src/db/migrate';

/**
 * Each test file gets its own database, copied from the run's migrated template (test/global-setup.ts). Files
 * cannot share one: a worker's outbox dispatcher starts every waiting event in its database, and would start
 * another file's events on its own task queue with its own ladder.
 */

/** A new database's URL (not made yet): the template's name and a random suffix. */
export function newTestDatabaseUrl(label = 'f'): string {
  const url = new URL(inject('templateDatabaseUrl'));
  url.pathname = `${url.pathname}_${label}${randomBytes(4).toString('hex')}`;
  return url.toString();
}

/** Copies the template into the database `url` names (a few hundred ms). */
export async function createTestDatabase(url: string): Promise<void> {
  const templateName = new URL(inject('templateDatabaseUrl')).pathname.slice(1);
  const name = new URL(url).pathname.slice(1);
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE "${name}" TEMPLATE "${templateName}"`);
  } finally {
    await client.end();
  }
}

export async function dropTestDatabase(url: string): Promise<void> {
  await dropDatabase(url);
}

/**
 * This test file's database. Known from the moment the file is loaded (test/setup/file-database.ts names it),
 * so a config can be built at collection time; it exists from the first hook on.
 */
export function testDatabaseUrl(): string {
  const url = process.env.PW_FILE_DATABASE_URL;
  if (!url) throw new Error('no test database: test/setup/file-database.ts did not run');
  return url;
}
