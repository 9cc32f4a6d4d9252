import type { Pool } from '../db/pool';

/**
 * Our own database as the rest of the system sees it: the handle the edges open (db/pool.ts) and pass down,
 * and the two questions they ask of it directly.
 */

export type { Pool };

/** The server's version: proves Postgres answers (the healthProbe workflow). */
export async function databaseVersion(pool: Pool): Promise<string> {
  const { rows } = await pool.query<{ version: string }>("SELECT current_setting('server_version') AS version");
  return rows[0]?.version ?? 'unknown';
}

/** Resolves when Postgres answers a trivial query (/readyz). */
export async function pingDatabase(pool: Pool): Promise<void> {
  await pool.query('SELECT 1');
}
