-- Up Migration

-- Attempts per endpoint and UTC hour, by outcome, with a histogram of response times: what the developers page's
-- charts read. Written in the statement that records each attempt (db/delivery-attempts.ts), so a chart reads at
-- most 168 hours of one endpoint instead of its attempts. An endpoint's hour is split over a few shards (a random
-- one per attempt) so concurrent attempts to one busy endpoint do not queue on one row; readers sum the shards.
CREATE TABLE delivery_hourly_stats (
  endpoint_id        text NOT NULL,
  -- start of the hour, truncated in UTC whatever the session's time zone
  hour               timestamptz NOT NULL,
  shard              smallint NOT NULL,
  account_id         text NOT NULL,
  livemode           boolean NOT NULL,
  succeeded          integer NOT NULL DEFAULT 0,
  -- failed attempts with a retry after them
  failed             integer NOT NULL DEFAULT 0,
  -- failed attempts that ended their delivery (abandoned)
  abandoned          integer NOT NULL DEFAULT 0,
  -- responses (attempts with a status code) per response-time bucket: core/delivery-stats.ts LATENCY_BOUNDS_MS
  latency_histogram  integer[] NOT NULL,
  PRIMARY KEY (endpoint_id, hour, shard)
);

-- Retention deletes hours older than the charts read (domain/delivery-stats.ts); rows arrive in hour order.
CREATE INDEX delivery_hourly_stats_hour_idx ON delivery_hourly_stats USING brin (hour);

-- The last eight days of attempts already recorded, so the charts start full.
WITH a AS (
  SELECT da.endpoint_id, date_trunc('hour', da.created_at, 'UTC') AS hour, da.account_id, da.livemode, da.succeeded,
         NOT da.succeeded AND d.status = 'failed' AND d.attempts = da.attempt AS abandoned,
         CASE WHEN da.status_code IS NOT NULL
              THEN width_bucket(da.duration_ms, ARRAY[25, 50, 75, 100, 150, 200, 300, 400, 500, 750, 1000, 1500, 2000, 3000, 5000, 7500, 10000]) + 1 END AS bucket
    FROM delivery_attempts da JOIN deliveries d ON d.id = da.delivery_id
   WHERE da.created_at >= now() - interval '8 days'
)
INSERT INTO delivery_hourly_stats (endpoint_id, hour, shard, account_id, livemode, succeeded, failed, abandoned, latency_histogram)
SELECT endpoint_id, hour, 0, min(account_id), bool_and(livemode),
       count(*) FILTER (WHERE succeeded), count(*) FILTER (WHERE NOT succeeded AND NOT abandoned), count(*) FILTER (WHERE abandoned),
       ARRAY[
         count(*) FILTER (WHERE bucket = 1),
         count(*) FILTER (WHERE bucket = 2),
         count(*) FILTER (WHERE bucket = 3),
         count(*) FILTER (WHERE bucket = 4),
         count(*) FILTER (WHERE bucket = 5),
         count(*) FILTER (WHERE bucket = 6),
         count(*) FILTER (WHERE bucket = 7),
         count(*) FILTER (WHERE bucket = 8),
         count(*) FILTER (WHERE bucket = 9),
         count(*) FILTER (WHERE bucket = 10),
         count(*) FILTER (WHERE bucket = 11),
         count(*) FILTER (WHERE bucket = 12),
         count(*) FILTER (WHERE bucket = 13),
         count(*) FILTER (WHERE bucket = 14),
         count(*) FILTER (WHERE bucket = 15),
         count(*) FILTER (WHERE bucket = 16),
         count(*) FILTER (WHERE bucket = 17),
         count(*) FILTER (WHERE bucket = 18)
       ]::integer[]
  FROM a GROUP BY endpoint_id, hour;

-- Down Migration

DROP TABLE delivery_hourly_stats;
