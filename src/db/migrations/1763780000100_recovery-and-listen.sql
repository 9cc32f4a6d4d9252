-- Up Migration

-- POST /v1/webhooks/:id/recover: the deliveries one recovery made, started in batches by its workflow.
ALTER TABLE deliveries ADD COLUMN recovery_id text;
CREATE INDEX deliveries_recovery_idx ON deliveries (recovery_id, created_at, id) WHERE recovery_id IS NOT NULL;
-- A recovery window is in event `created` seconds.
CREATE INDEX events_account_created_idx ON events (account_id, livemode, created);

-- `listen`: the session's self-signed certificate (PEM). Set only by the CLI's local registration, on a test-mode
-- endpoint whose URL is a loopback address; the worker then posts to that loopback URL without
-- WEBHOOK_ALLOW_PRIVATE_TARGETS, trusting exactly this certificate, so nothing but the listen process can answer.
-- Changing the URL through the API clears it.
ALTER TABLE webhook_endpoints ADD COLUMN local_certificate text;
ALTER TABLE webhook_endpoints ADD CONSTRAINT webhook_endpoints_local_test_only CHECK (local_certificate IS NULL OR NOT livemode);

-- Down Migration

ALTER TABLE webhook_endpoints DROP CONSTRAINT webhook_endpoints_local_test_only;
ALTER TABLE webhook_endpoints DROP COLUMN local_certificate;
DROP INDEX events_account_created_idx;
DROP INDEX deliveries_recovery_idx;
ALTER TABLE deliveries DROP COLUMN recovery_id;
