-- Up Migration

CREATE TABLE accounts (
  id          text PRIMARY KEY,
  name        text NOT NULL,
  email       text,
  status      text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'active', 'suspended')),
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now()
);

-- Plain keys are never stored: SHA-256 of the whole key, and its last four characters for display.
CREATE TABLE api_keys (
  id            text PRIMARY KEY,
  account_id    text NOT NULL REFERENCES accounts (id),
  mode          text NOT NULL CHECK (mode IN ('test', 'live')),
  key_hash      bytea NOT NULL UNIQUE,
  last4         text NOT NULL,
  scopes        text[] NOT NULL,
  description   text,
  expires_at    timestamptz,
  revoked_at    timestamptz,
  last_used_at  timestamptz,
  created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX api_keys_account_idx ON api_keys (account_id, created_at DESC);

CREATE TABLE webhook_endpoints (
  id                          text PRIMARY KEY,
  account_id                  text NOT NULL REFERENCES accounts (id),
  livemode                    boolean NOT NULL,
  url                         text NOT NULL,
  -- empty: every event kind, kinds added later too
  events                      text[] NOT NULL DEFAULT '{}',
  description                 text,
  -- 'enc:v1:...' when WEBHOOK_SECRET_ENCRYPTION_KEY is set, the plain whsec_ otherwise
  secret                      text NOT NULL,
  previous_secret             text,
  previous_secret_expires_at  timestamptz,
  status                      text NOT NULL DEFAULT 'enabled' CHECK (status IN ('enabled', 'failing')),
  -- abandoned deliveries since the last success, kept by the endpoint supervisor
  abandoned_streak            integer NOT NULL DEFAULT 0,
  created_at                  timestamptz NOT NULL DEFAULT now(),
  -- soft delete: pending ladders read it and stop; attempts keep their foreign key
  deleted_at                  timestamptz
);
CREATE INDEX webhook_endpoints_listing_idx
  ON webhook_endpoints (account_id, livemode, created_at DESC, id DESC) WHERE deleted_at IS NULL;

CREATE TABLE events (
  id            text PRIMARY KEY,
  account_id    text NOT NULL REFERENCES accounts (id),
  livemode      boolean NOT NULL,
  type          text NOT NULL,
  -- the body's `created`, fixed at publish time
  created       bigint NOT NULL,
  -- the exact bytes posted on every attempt
  body          text NOT NULL,
  -- fan-out snapshot at publish time
  endpoint_ids  text[] NOT NULL,
  inserted_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX events_account_idx ON events (account_id, livemode, inserted_at DESC);

CREATE TABLE delivery_attempts (
  id             text PRIMARY KEY,
  endpoint_id    text NOT NULL REFERENCES webhook_endpoints (id),
  event_id       text NOT NULL REFERENCES events (id),
  event_type     text NOT NULL,
  account_id     text NOT NULL,
  livemode       boolean NOT NULL,
  attempt        integer NOT NULL CHECK (attempt >= 1),
  status_code    integer,
  -- first 500 characters
  response_body  text CHECK (char_length(response_body) <= 500),
  error          text,
  duration_ms    integer NOT NULL,
  succeeded      boolean NOT NULL,
  created_at     timestamptz NOT NULL DEFAULT now(),
  UNIQUE (endpoint_id, event_id, attempt)
);
CREATE INDEX delivery_attempts_endpoint_idx ON delivery_attempts (endpoint_id, created_at DESC, id DESC);
CREATE INDEX delivery_attempts_event_idx ON delivery_attempts (event_id);

CREATE TABLE notifications (
  id             text PRIMARY KEY,
  account_id     text NOT NULL REFERENCES accounts (id),
  endpoint_id    text REFERENCES webhook_endpoints (id),
  kind           text NOT NULL,
  -- makes the notifying activity idempotent under retries
  dedupe_key     text NOT NULL UNIQUE,
  subject        text NOT NULL,
  body           text NOT NULL,
  email_to       text,
  email_sent_at  timestamptz,
  created_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX notifications_account_idx ON notifications (account_id, created_at DESC);

CREATE TABLE towns (
  id       text PRIMARY KEY,
  name     text NOT NULL,
  region   text NOT NULL,
  country  text NOT NULL,
  latitude double precision,
  longitude double precision
);

-- Down Migration

DROP TABLE towns;
DROP TABLE notifications;
DROP TABLE delivery_attempts;
DROP TABLE events;
DROP TABLE webhook_endpoints;
DROP TABLE api_keys;
DROP TABLE accounts;
