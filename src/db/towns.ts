import type { Pool } from './pool';

/** Table towns, seeded by migration. */

export interface TownRow {
  id: string;
  name: string;
  region: string;
  country: string;
  latitude: number | null;
  longitude: number | null;
}

/**
 * Ordered by id (`town_<name>`, so alphabetical) with `startingAfter` as a keyset cursor: any id works as a
 * position, so a cursor never goes stale. Fetches limit + 1 rows to learn has_more.
 */
export async function listTowns(
  pool: Pool,
  options: { limit: number; startingAfter?: string; county?: string },
): Promise<{ rows: TownRow[]; hasMore: boolean }> {
  const { rows } = await pool.query<TownRow>(
    `SELECT id, name, region, country, latitude, longitude FROM towns
      WHERE ($1::text IS NULL OR id > $1) AND ($2::text IS NULL OR lower(region) = lower($2))
      ORDER BY id LIMIT $3`,
    [options.startingAfter ?? null, options.county ?? null, options.limit + 1],
  );
  return { rows: rows.slice(0, options.limit), hasMore: rows.length > options.limit };
}
