-- Up Migration

-- Developers page sign-in. Neither a link's token nor a session id is stored:
-- only their SHA-256, so a read of these tables signs nobody in.

-- Single-use links, valid 10 minutes; used_at is set by the one request that opens it.
CREATE TABLE dashboard_sign_in_links (
  token_hash  bytea PRIMARY KEY,
  account_id  text NOT NULL REFERENCES accounts (id),
  expires_at  timestamptz NOT NULL,
  used_at     timestamptz,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX dashboard_sign_in_links_expiry_idx ON dashboard_sign_in_links (expires_at);

-- 12-hour sessions; sign-out sets ended_at. csrf_token goes back in every state-changing form.
CREATE TABLE dashboard_sessions (
  id_hash     bytea PRIMARY KEY,
  account_id  text NOT NULL REFERENCES accounts (id),
  csrf_token  text NOT NULL,
  expires_at  timestamptz NOT NULL,
  ended_at    timestamptz,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX dashboard_sessions_account_idx ON dashboard_sessions (account_id);

-- Down Migration

DROP TABLE dashboard_sessions;
DROP TABLE dashboard_sign_in_links;
