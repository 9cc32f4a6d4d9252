import type { Pool } from '../db/pool';
import { listTowns as listTownRows } from '../db/towns';

/** Towns the service delivers to (seeded by migration), as /v1/towns shows them. */

export interface Town {
  id: string;
  object: 'town';
  name: string;
  county: string;
  country: string;
  latitude: number | null;
  longitude: number | null;
}

export interface TownPage {
  towns: Town[];
  hasMore: boolean;
}

/** `region` holds the county for Kenyan towns. */
export async function listTowns(
  pool: Pool,
  options: { limit: number; startingAfter?: string; county?: string },
): Promise<TownPage> {
  const { rows, hasMore } = await listTownRows(pool, options);
  return {
    towns: rows.map((row) => ({
      id: row.id,
      object: 'town',
      name: row.name,
      county: row.region,
      country: row.country,
      latitude: row.latitude,
      longitude: row.longitude,
    })),
    hasMore,
  };
}
