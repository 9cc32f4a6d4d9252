-- Up Migration

-- An account's redeliveries still pending, counted before each resend, recover or test: a partial index holds
-- only those rows, so the count reads the account's pending redeliveries and nothing else.
CREATE INDEX deliveries_pending_redeliveries_idx ON deliveries (account_id)
  WHERE status = 'pending' AND trigger <> 'automatic';

-- Down Migration

DROP INDEX deliveries_pending_redeliveries_idx;
