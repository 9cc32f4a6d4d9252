-- Up Migration

-- A developers-page session also ends after 30 minutes without a request; the last request's time is recorded
-- (at most about once a minute per session), and new sign-ins start from their opening.
ALTER TABLE dashboard_sessions ADD COLUMN last_seen_at timestamptz NOT NULL DEFAULT now();

-- Down Migration

ALTER TABLE dashboard_sessions DROP COLUMN last_seen_at;
