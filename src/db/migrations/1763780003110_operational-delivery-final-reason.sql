-- Up Migration

-- A merchant delivery that ended failed is told to the operational endpoints once its transaction commits, with
-- the reason and attempts it ended with: a constraint trigger deferred to the commit reads the delivery as the
-- transaction left it. A 410 Gone answer fails the delivery with its attempt and then, in the same transaction,
-- disables the endpoint and gives the delivery the reason endpoint_gone (db/endpoints.ts disableGoneEndpoint);
-- told at the update itself, it read attempts_exhausted.
DROP TRIGGER deliveries_operational ON deliveries;
CREATE OR REPLACE FUNCTION operational_delivery_failed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  d record;
BEGIN
  SELECT dl.endpoint_id, dl.event_id, dl.attempts, dl.reason, dl.status INTO d FROM deliveries dl WHERE dl.id = NEW.id;
  IF NOT FOUND OR d.status <> 'failed' THEN RETURN NULL; END IF;
  PERFORM publish_operational_event(
    CASE WHEN d.reason = 'expired' THEN 'delivery.expired' ELSE 'delivery.abandoned' END,
    d.endpoint_id,
    jsonb_build_object('event_id', d.event_id,
                       'event_type', (SELECT type FROM events WHERE id = d.event_id),
                       'attempts', d.attempts,
                       'reason', COALESCE(d.reason, 'attempts_exhausted')));
  RETURN NULL;
EXCEPTION WHEN OTHERS THEN
  RAISE WARNING 'operational event about % not published: %', NEW.id, SQLERRM;
  RETURN NULL;
END;
$$;
CREATE CONSTRAINT TRIGGER deliveries_operational AFTER UPDATE ON deliveries
  DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW WHEN (OLD.status = 'pending' AND NEW.status = 'failed' AND NEW.account_id <> 'acct_operational')
  EXECUTE FUNCTION operational_delivery_failed();

-- Down Migration

DROP TRIGGER deliveries_operational ON deliveries;
CREATE OR REPLACE FUNCTION operational_delivery_failed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM publish_operational_event(
    CASE WHEN NEW.reason = 'expired' THEN 'delivery.expired' ELSE 'delivery.abandoned' END,
    NEW.endpoint_id,
    jsonb_build_object('event_id', NEW.event_id,
                       'event_type', (SELECT type FROM events WHERE id = NEW.event_id),
                       'attempts', NEW.attempts,
                       'reason', COALESCE(NEW.reason, 'attempts_exhausted')));
  RETURN NULL;
EXCEPTION WHEN OTHERS THEN
  RAISE WARNING 'operational event about % not published: %', NEW.id, SQLERRM;
  RETURN NULL;
END;
$$;
CREATE TRIGGER deliveries_operational AFTER UPDATE ON deliveries
  FOR EACH ROW WHEN (OLD.status = 'pending' AND NEW.status = 'failed' AND NEW.account_id <> 'acct_operational')
  EXECUTE FUNCTION operational_delivery_failed();
