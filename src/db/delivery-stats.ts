import type { HourCounts } from '../core/delivery-stats';
import type { Db } from './pool';

/**
 * Table delivery_hourly_stats: attempts per endpoint and UTC hour by outcome, with a histogram of response times.
 * Written with each attempt (db/delivery-attempts.ts insertAttempt); read here by the charts, every query bounded
 * by the primary key (endpoint, hour) so it reads at most the window's rows whatever the size of the attempts.
 */

/** An endpoint's hours in [from, until), summed over shards; hours without attempts have no row. */
export async function listEndpointHours(db: Db, endpointId: string, from: Date, until: Date): Promise<HourCounts[]> {
  const { rows } = await db.query<HourCounts>(
    `SELECT hour, sum(succeeded)::integer AS succeeded, sum(failed)::integer AS failed, sum(abandoned)::integer AS abandoned
       FROM delivery_hourly_stats
      WHERE endpoint_id = $1 AND hour >= $2 AND hour < $3
      GROUP BY hour ORDER BY hour`,
    [endpointId, from, until],
  );
  return rows;
}

/** The response-time histogram of an endpoint's hours in [from, until), bucket by bucket. */
export async function endpointLatencyHistogram(db: Db, endpointId: string, from: Date, until: Date): Promise<number[]> {
  const { rows } = await db.query<{ histogram: number[] | null }>(
    `SELECT array_agg(total ORDER BY bucket) AS histogram
       FROM (SELECT bucket, sum(count)::integer AS total
               FROM delivery_hourly_stats, unnest(latency_histogram) WITH ORDINALITY AS h(count, bucket)
              WHERE endpoint_id = $1 AND hour >= $2 AND hour < $3
              GROUP BY bucket) buckets`,
    [endpointId, from, until],
  );
  return rows[0]?.histogram ?? [];
}

/** Hours in [from, until) of several endpoints (an account's overview), summed over shards. */
export async function listEndpointsHours(
  db: Db,
  endpointIds: readonly string[],
  from: Date,
  until: Date,
): Promise<(HourCounts & { endpoint_id: string })[]> {
  if (endpointIds.length === 0) return [];
  const { rows } = await db.query<HourCounts & { endpoint_id: string }>(
    `SELECT endpoint_id, hour, sum(succeeded)::integer AS succeeded, sum(failed)::integer AS failed,
            sum(abandoned)::integer AS abandoned
       FROM delivery_hourly_stats
      WHERE endpoint_id = ANY ($1::text[]) AND hour >= $2 AND hour < $3
      GROUP BY endpoint_id, hour`,
    [endpointIds, from, until],
  );
  return rows;
}

/**
 * Retention: at most `limit` rows of hours that began before `cutoff` (found through the BRIN index on hour:
 * rows are written in hour order). The charts read at most the last 7 days.
 */
export async function deleteHoursBefore(db: Db, cutoff: Date, limit: number): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM delivery_hourly_stats WHERE ctid = ANY (ARRAY(
       SELECT ctid FROM delivery_hourly_stats WHERE hour < $1 LIMIT $2))`,
    [cutoff, limit],
  );
  return rowCount ?? 0;
}
