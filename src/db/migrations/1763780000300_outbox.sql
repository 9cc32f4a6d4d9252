-- Up Migration

-- The events table is the outbox of the hand-off to Temporal. Publishing only stores the
-- event; a dispatcher in each worker starts its delivery workflow and then sets dispatched_at. An event with
-- nobody to deliver to is dispatched when stored. dispatch_lease_until keeps two dispatchers from starting the
-- same event at once; once it lapses (the dispatcher died, or Temporal refused) the event is claimed again.
ALTER TABLE events ADD COLUMN dispatched_at timestamptz;
ALTER TABLE events ADD COLUMN dispatch_lease_until timestamptz;
-- Every event stored before the outbox had its workflow started by its publisher.
UPDATE events SET dispatched_at = inserted_at;

-- The dispatcher's sweep and the outbox-lag gauge read only the events still waiting.
CREATE INDEX events_undispatched_idx ON events (inserted_at, id) WHERE dispatched_at IS NULL;

-- Storing an event that waits for its hand-off wakes the dispatchers (LISTEN event_outbox), when its
-- transaction commits. A missed notification costs latency only: the sweep finds the event.
CREATE FUNCTION notify_event_outbox() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('event_outbox', NEW.id);
  RETURN NULL;
END;
$$;
CREATE TRIGGER events_outbox_notify AFTER INSERT ON events
  FOR EACH ROW WHEN (NEW.dispatched_at IS NULL) EXECUTE FUNCTION notify_event_outbox();

-- Down Migration

DROP TRIGGER events_outbox_notify ON events;
DROP FUNCTION notify_event_outbox();
DROP INDEX events_undispatched_idx;
ALTER TABLE events DROP COLUMN dispatch_lease_until;
ALTER TABLE events DROP COLUMN dispatched_at;
