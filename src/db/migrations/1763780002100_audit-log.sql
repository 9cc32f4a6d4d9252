-- Up Migration

-- Who changed which key or endpoint, one row per change, written in the transaction of the change itself
-- (domain/audit-log.ts). Names only: no value of a key, secret or header is ever stored here.
CREATE TABLE audit_log (
  id          text PRIMARY KEY,
  account_id  text NOT NULL REFERENCES accounts (id),
  livemode    boolean NOT NULL,
  action      text NOT NULL CHECK (action IN ('api_key.created', 'api_key.revoked', 'endpoint.created',
                'endpoint.updated', 'endpoint.deleted', 'endpoint.secret_rotated', 'endpoint.paused',
                'endpoint.resumed', 'endpoint.disabled')),
  actor_type  text NOT NULL CHECK (actor_type IN ('api_key', 'dashboard', 'cli', 'system')),
  actor_id    text,
  target_type text NOT NULL,
  target_id   text NOT NULL,
  -- endpoint.updated: the names of the fields that changed.
  changes     text[],
  created_at  timestamptz NOT NULL DEFAULT now(),
  CHECK ((actor_type IN ('api_key', 'dashboard')) = (actor_id IS NOT NULL))
);
-- GET /v1/audit_log: one account and mode, newest first.
CREATE INDEX audit_log_account_idx ON audit_log (account_id, livemode, created_at DESC, id DESC);
-- Retention walks it oldest first.
CREATE INDEX audit_log_created_idx ON audit_log (created_at);

-- Down Migration

DROP TABLE audit_log;
