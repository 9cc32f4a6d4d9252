-- Up Migration

-- One delivery: one ladder of attempts (1..6) of one event to one endpoint. Publishing makes an `automatic`
-- delivery per endpoint of the fan-out snapshot; merchants add `resend`, `recover` and `test` deliveries of the
-- same event. Its status follows its attempts, written in the statement that records each attempt.
CREATE TABLE deliveries (
  id                text PRIMARY KEY,
  -- retention deletes an event with its deliveries
  event_id          text NOT NULL REFERENCES events (id) ON DELETE CASCADE,
  endpoint_id       text NOT NULL REFERENCES webhook_endpoints (id),
  account_id        text NOT NULL,
  livemode          boolean NOT NULL,
  trigger           text NOT NULL CHECK (trigger IN ('automatic', 'resend', 'recover', 'test')),
  status            text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed', 'skipped')),
  -- why it was skipped (endpoint_deleted, endpoint_disabled, account_suspended, ...) or failed (attempts_exhausted)
  reason            text,
  attempts          integer NOT NULL DEFAULT 0,
  last_status_code  integer,
  last_attempt_at   timestamptz,
  created_at        timestamptz NOT NULL DEFAULT now()
);
-- One automatic delivery per event and endpoint: attempts of workflows started before deliveries existed carry
-- no delivery id and find theirs by this pair.
CREATE UNIQUE INDEX deliveries_automatic_key ON deliveries (event_id, endpoint_id) WHERE trigger = 'automatic';
-- GET /v1/events/:id lists an event's deliveries; recover looks up an endpoint's deliveries per event.
CREATE INDEX deliveries_event_idx ON deliveries (event_id, created_at, id);
CREATE INDEX deliveries_endpoint_idx ON deliveries (endpoint_id, event_id);

-- Backfill: every (event, endpoint) of a snapshot or with a recorded attempt is an automatic delivery. Its status
-- is read from its attempts; one with no success is `failed` once it had six attempts or its last is older than
-- the default ladder (about 7 h 11 m), else `pending` (a running workflow keeps it up to date from now on). A pair
-- never attempted and older than that will never be (endpoint removed, account suspended): `skipped`.
INSERT INTO deliveries (id, event_id, endpoint_id, account_id, livemode, trigger, status, reason, attempts,
                        last_status_code, last_attempt_at, created_at)
SELECT 'dly_' || replace(gen_random_uuid()::text, '-', ''), pairs.event_id, pairs.endpoint_id, ev.account_id,
       ev.livemode, 'automatic',
       CASE WHEN a.any_success THEN 'succeeded'
            WHEN a.count >= 6 OR a.last_at < now() - interval '8 hours' THEN 'failed'
            WHEN a.count IS NULL AND ev.inserted_at < now() - interval '8 hours' THEN 'skipped'
            ELSE 'pending' END,
       CASE WHEN NOT a.any_success AND (a.count >= 6 OR a.last_at < now() - interval '8 hours') THEN 'attempts_exhausted'
            WHEN a.count IS NULL AND ev.inserted_at < now() - interval '8 hours' THEN 'not_attempted' END,
       COALESCE(a.count, 0), a.last_status_code, a.last_at, ev.inserted_at
  FROM (SELECT id AS event_id, unnest(endpoint_ids) AS endpoint_id FROM events
        UNION
        SELECT event_id, endpoint_id FROM delivery_attempts) pairs
  JOIN events ev ON ev.id = pairs.event_id
  JOIN webhook_endpoints we ON we.id = pairs.endpoint_id
  LEFT JOIN LATERAL (
    SELECT count(*)::integer AS count, bool_or(succeeded) AS any_success, max(created_at) AS last_at,
           (array_agg(status_code ORDER BY attempt DESC))[1] AS last_status_code
      FROM delivery_attempts da
     WHERE da.event_id = pairs.event_id AND da.endpoint_id = pairs.endpoint_id
    HAVING count(*) > 0
  ) a ON true;

ALTER TABLE delivery_attempts ADD COLUMN delivery_id text REFERENCES deliveries (id) ON DELETE CASCADE;
UPDATE delivery_attempts da SET delivery_id = d.id
  FROM deliveries d
 WHERE d.event_id = da.event_id AND d.endpoint_id = da.endpoint_id AND d.trigger = 'automatic';
ALTER TABLE delivery_attempts ALTER COLUMN delivery_id SET NOT NULL;
-- attempt numbers restart with each delivery
ALTER TABLE delivery_attempts DROP CONSTRAINT delivery_attempts_endpoint_id_event_id_attempt_key;
ALTER TABLE delivery_attempts ADD CONSTRAINT delivery_attempts_delivery_attempt_key UNIQUE (delivery_id, attempt);

-- PATCH /v1/webhooks/:id { disabled: true }. A column of its own rather than a value of `status`: the failing
-- mark (status) belongs to endpoint health and is written by its own statements, so a disabled endpoint keeps
-- its mark, and enabling it again shows `failing` until a delivery succeeds. The API shows status `disabled`.
ALTER TABLE webhook_endpoints ADD COLUMN disabled_at timestamptz;

-- Down Migration

ALTER TABLE webhook_endpoints DROP COLUMN disabled_at;
ALTER TABLE delivery_attempts DROP CONSTRAINT delivery_attempts_delivery_attempt_key;
DELETE FROM delivery_attempts da USING deliveries d WHERE d.id = da.delivery_id AND d.trigger <> 'automatic';
ALTER TABLE delivery_attempts ADD CONSTRAINT delivery_attempts_endpoint_id_event_id_attempt_key UNIQUE (endpoint_id, event_id, attempt);
ALTER TABLE delivery_attempts DROP COLUMN delivery_id;
DROP TABLE deliveries;
