-- Up Migration

-- A notification names the account beside the id (`<id> <account id>`): a dispatcher hands notified events off in
-- turns across accounts (worker/notified-queue.ts), so one account's flood of publishes does not queue another's
-- events behind it. A dispatcher that reads an id it cannot claim leaves it to the sweep.
CREATE OR REPLACE FUNCTION notify_event_outbox() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('event_outbox', NEW.id || ' ' || NEW.account_id);
  RETURN NULL;
END;
$$;

CREATE OR REPLACE FUNCTION notify_delivery_outbox() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('event_outbox', NEW.id || ' ' || NEW.account_id);
  RETURN NULL;
END;
$$;

-- Down Migration

CREATE OR REPLACE FUNCTION notify_event_outbox() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('event_outbox', NEW.id);
  RETURN NULL;
END;
$$;

CREATE OR REPLACE FUNCTION notify_delivery_outbox() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('event_outbox', NEW.id);
  RETURN NULL;
END;
$$;
