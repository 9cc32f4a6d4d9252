-- Up Migration

-- The W3C traceparent of the publish that stored the event: the outbox hand-off and every attempt continue its
-- trace, in whichever process they run, and each POST's traceparent carries its trace id. Null for events stored
-- before it existed (their POSTs start a trace of their own).
ALTER TABLE events ADD COLUMN trace_parent text;

-- Headers a merchant asked to be sent on every POST to the endpoint: a JSON object of name to value, sealed like
-- the signing secret (core/secrets.ts) since values may be credentials. '{}' plain when there are none.
ALTER TABLE webhook_endpoints ADD COLUMN headers text NOT NULL DEFAULT '{}';

-- Down Migration

ALTER TABLE webhook_endpoints DROP COLUMN headers;
ALTER TABLE events DROP COLUMN trace_parent;
