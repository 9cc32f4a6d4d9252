-- Up Migration

-- Endpoint health has one owner, this database: the abandoned streak, the failing
-- mark and the merchant's notification change in one transaction (domain/endpoint-health.ts), each abandoned
-- delivery counted once however often it is reported, and a success resets them.

-- Each abandoned delivery of an event to an endpoint, once: a retried signal or activity finds its row and counts
-- nothing. `counted` is false when a success was recorded after the delivery's last attempt: the streak had
-- already moved past it.
CREATE TABLE endpoint_abandonments (
  endpoint_id   text NOT NULL REFERENCES webhook_endpoints (id),
  event_id      text NOT NULL,
  -- when the delivery's last attempt was recorded
  abandoned_at  timestamptz NOT NULL,
  counted       boolean NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (endpoint_id, event_id)
);
-- retention deletes old rows in batches
CREATE INDEX endpoint_abandonments_created_idx ON endpoint_abandonments (created_at);

-- The notification of the endpoint's current failing episode: its email goes out only while it still is.
ALTER TABLE webhook_endpoints ADD COLUMN failing_notification_id text;

-- A success resets the streak and the mark. The statement recording an attempt does so too, cheaply, but on its
-- own snapshot: an abandonment committed while that statement waited for the endpoint's row lock would be
-- missed, and the endpoint left failing after a success. This trigger first waits on the row (a KEY SHARE lock,
-- which the abandonment's FOR UPDATE excludes), then updates with a fresh snapshot, so a success and an
-- abandonment are always ordered: either the abandonment sees the success, or the reset sees the abandonment.
CREATE FUNCTION reset_endpoint_health_on_success() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM 1 FROM webhook_endpoints WHERE id = NEW.endpoint_id FOR KEY SHARE;
  UPDATE webhook_endpoints SET abandoned_streak = 0, status = 'enabled'
   WHERE id = NEW.endpoint_id AND (abandoned_streak > 0 OR status = 'failing');
  RETURN NULL;
END
$$;
CREATE TRIGGER reset_endpoint_health_on_success AFTER INSERT ON delivery_attempts
  FOR EACH ROW WHEN (NEW.succeeded) EXECUTE FUNCTION reset_endpoint_health_on_success();

-- Down Migration

DROP TRIGGER reset_endpoint_health_on_success ON delivery_attempts;
DROP FUNCTION reset_endpoint_health_on_success();
ALTER TABLE webhook_endpoints DROP COLUMN failing_notification_id;
DROP TABLE endpoint_abandonments;
