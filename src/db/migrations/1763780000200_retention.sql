-- Up Migration

-- Retention (EVENT_RETENTION) walks events and notifications oldest first, in batches.
CREATE INDEX events_inserted_idx ON events (inserted_at, id);
CREATE INDEX notifications_created_idx ON notifications (created_at);

-- Down Migration

DROP INDEX notifications_created_idx;
DROP INDEX events_inserted_idx;
