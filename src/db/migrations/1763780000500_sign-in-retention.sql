-- Up Migration

-- Retention (EVENT_RETENTION) deletes sign-in links and sessions that stopped being usable, oldest first.
CREATE INDEX dashboard_sessions_expiry_idx ON dashboard_sessions (expires_at);

-- Down Migration

DROP INDEX dashboard_sessions_expiry_idx;
