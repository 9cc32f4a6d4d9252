-- Up Migration

-- Paused by its owner (POST /v1/webhooks/:id/pause): while set, attempts to the endpoint are held, not made and
-- not counted (attempt/run.ts), and the API shows status `paused`; resuming clears it. A column of its own, like
-- disabled_at: the failing mark (status) stays beneath, so a resume shows the status the endpoint had before.
ALTER TABLE webhook_endpoints ADD COLUMN paused_at timestamptz;

-- Why the endpoint was disabled when the engine did it: 'gone' (it answered 410 Gone). Null for a disable by its
-- owner and for an enabled endpoint; enabling it again clears it.
ALTER TABLE webhook_endpoints ADD COLUMN disabled_reason text CHECK (disabled_reason IN ('gone'));

-- Down Migration

ALTER TABLE webhook_endpoints DROP COLUMN disabled_reason;
ALTER TABLE webhook_endpoints DROP COLUMN paused_at;
