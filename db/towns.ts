import type { Pool } from './pool';

export interface Town {
  id: string;
  object: 'town';
  name: string;
  county: string;
  country: string;
  latitude: number | null;
  longitude: number | null;
}

interface TownRow {
  id: string;
  name: string;
  region: string;
  country: string;
  latitude: number | null;
  longitude: number | null;
}

export interface TownPage {
  towns: Town[];
  hasMore: boolean;
}

/**
 * Ordered by id (`town_<name>`, so alphabetical) with `startingAfter` as a keyset cursor: any id works as a
 * position, so a cursor never goes stale. `region` holds the county for Kenyan towns.
 */
export async function listTowns(
  pool: Pool,
  options: { limit: number; startingAfter?: string; county?: string },
): Promise<TownPage> {
  const { rows } = await pool.query<TownRow>(
    `SELECT id, name, region, country, latitude, longitude FROM towns
      WHERE ($1::text IS NULL OR id > $1) AND ($2::text IS NULL OR lower(region) = lower($2))
      ORDER BY id LIMIT $3`,
    [options.startingAfter ?? null, options.county ?? null, options.limit + 1],
  );
  return {
    towns: rows.slice(0, options.limit).map((row) => ({
      id: row.id,
      object: 'town',
      name: row.name,
      county: row.region,
      country: row.country,
      latitude: row.latitude,
      longitude: row.longitude,
    })),
    hasMore: rows.length > options.limit,
  };
}
