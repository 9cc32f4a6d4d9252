-- Up Migration

-- The deliveries a merchant asks for (trigger resend, recover or test) are handed to Temporal through the outbox
-- like published events: the API stores them and answers, and a worker's dispatcher starts each one's own
-- `delivery:<dly_id>` workflow, then sets dispatched_at. Automatic deliveries are handed off with their event
-- (the events table's columns) and never use these. dispatch_after is when a delivery may start: now for a
-- resend or a test event, spaced at RECOVER_RATE_PER_SECOND for a recovery. dispatch_lease_until keeps two
-- dispatchers from starting the same delivery at once; once it lapses the delivery is claimed again.
ALTER TABLE deliveries ADD COLUMN dispatched_at timestamptz;
ALTER TABLE deliveries ADD COLUMN dispatch_lease_until timestamptz;
ALTER TABLE deliveries ADD COLUMN dispatch_after timestamptz NOT NULL DEFAULT now();
-- Every delivery stored before this had its workflow started by the process that stored it.
UPDATE deliveries SET dispatched_at = created_at WHERE trigger <> 'automatic';

-- The dispatcher's sweep, its wake-up for the next delivery due, and the outbox gauge read only these.
CREATE INDEX deliveries_undispatched_idx ON deliveries (dispatch_after, id)
  WHERE dispatched_at IS NULL AND trigger <> 'automatic';

-- A recovery's deliveries are read as one queue per endpoint (its pace: where a new recovery joins it, how far
-- the dispatcher may run ahead, how it moves back after a late start), not by recovery.
DROP INDEX deliveries_recovery_idx;
CREATE INDEX deliveries_recovery_queue_idx ON deliveries (endpoint_id, dispatch_after)
  WHERE dispatched_at IS NULL AND trigger = 'recover';

-- Storing a delivery that is due now wakes the dispatchers on the events' channel (LISTEN event_outbox), with
-- the delivery's id, when its transaction commits. One due later (a recovery's next ones) is found by the
-- dispatcher's wake-up for the earliest dispatch_after; a missed notification costs latency only.
CREATE FUNCTION notify_delivery_outbox() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('event_outbox', NEW.id);
  RETURN NULL;
END;
$$;
CREATE TRIGGER deliveries_outbox_notify AFTER INSERT ON deliveries
  FOR EACH ROW WHEN (NEW.dispatched_at IS NULL AND NEW.trigger <> 'automatic' AND NEW.dispatch_after <= now())
  EXECUTE FUNCTION notify_delivery_outbox();

-- Down Migration

DROP TRIGGER deliveries_outbox_notify ON deliveries;
DROP FUNCTION notify_delivery_outbox();
CREATE INDEX deliveries_recovery_idx ON deliveries (recovery_id, created_at, id) WHERE recovery_id IS NOT NULL;
DROP INDEX deliveries_recovery_queue_idx;
DROP INDEX deliveries_undispatched_idx;
ALTER TABLE deliveries DROP COLUMN dispatch_after;
ALTER TABLE deliveries DROP COLUMN dispatch_lease_until;
ALTER TABLE deliveries DROP COLUMN dispatched_at;
