import type { Pool } from '../../src/db/pool';
import { waitFor } from './wait';

/** The database's clock second: rate-limit places and tokens are counted on it. */
export async function dbSecond(pool: Pool): Promise<number> {
  const { rows } = await pool.query<{ s: string }>('SELECT floor(extract(epoch FROM clock_timestamp()))::bigint AS s');
  return Number(rows[0]!.s);
}

/** Waits for the start of a database second, so a handful of statements all run within it; answers that second. */
export function freshSecond(pool: Pool): Promise<number> {
  return waitFor(
    async () => {
      const { rows } = await pool.query<{ ms: number }>(
        'SELECT ((extract(epoch FROM clock_timestamp()) * 1000)::bigint % 1000)::int AS ms',
      );
      return rows[0]!.ms < 300 ? dbSecond(pool) : undefined;
    },
    { intervalMs: 20, what: 'the start of a second' },
  );
}
