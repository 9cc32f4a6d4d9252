-- Up Migration

-- Operational webhooks: the parcel system's own endpoints, told when a merchant's endpoint or delivery needs
-- attention. They are endpoints of one reserved account, delivered by the same engine as a merchant's: their
-- events are rows of `events` with automatic deliveries, handed off through the outbox, where this account takes
-- its own turns (db/outbox.ts), so its events never wait behind a merchant's nor a merchant's behind them.
-- Its endpoints are live-mode rows with ids owe_...; the account has no API key, so no merchant reaches them.
INSERT INTO accounts (id, name, status) VALUES ('acct_operational', 'Operational webhooks (parcel system)', 'active')
  ON CONFLICT (id) DO NOTHING;

-- The one way an operational event is published, in the caller's transaction (a trigger below, or
-- domain/operational-webhooks.ts publishOperationalEvent): the body is stored like a merchant event's and an
-- automatic delivery made to each operational endpoint subscribed to the kind (all kinds when `events` is
-- empty). Nothing is stored when none is subscribed, when the endpoint is itself operational (its own
-- troubles are not reported to itself), or when it is a `listen` session's (a developer's own machine). `delivery` is {event_id, event_type, attempts, reason} or NULL.
-- The body's shape is core/operational-event-schemas.ts's; the tests check each kind against it.
CREATE FUNCTION publish_operational_event(p_kind text, p_endpoint_id text, p_delivery jsonb DEFAULT NULL)
  RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  ep record;
  v_targets text[];
  v_id text := 'evt_' || replace(gen_random_uuid()::text, '-', '');
  v_created bigint := floor(extract(epoch FROM now()))::bigint;
  v_body text;
BEGIN
  SELECT m.id, m.account_id, m.livemode, m.url, m.local_certificate IS NOT NULL AS listening,
         CASE WHEN m.deleted_at IS NOT NULL THEN 'deleted' WHEN m.disabled_at IS NOT NULL THEN 'disabled' ELSE m.status END AS shown
    INTO ep FROM webhook_endpoints m WHERE m.id = p_endpoint_id;
  IF NOT FOUND OR ep.account_id = 'acct_operational' OR ep.listening THEN RETURN NULL; END IF;
  SELECT COALESCE(array_agg(we.id ORDER BY we.created_at, we.id), '{}') INTO v_targets FROM webhook_endpoints we
   WHERE we.account_id = 'acct_operational' AND we.livemode AND we.deleted_at IS NULL AND we.disabled_at IS NULL
     AND (we.events = '{}' OR p_kind = ANY (we.events));
  IF cardinality(v_targets) = 0 THEN RETURN NULL; END IF;
  v_body := format('{"id":%s,"object":"event","type":%s,"created":%s,"account_id":%s,"livemode":%s,"data":{"endpoint":{"id":%s,"url":%s,"status":%s}%s}}',
                 to_json(v_id), to_json(p_kind), v_created, to_json(ep.account_id), to_json(ep.livemode),
                 to_json(ep.id), to_json(ep.url), to_json(ep.shown),
                 CASE WHEN p_delivery IS NULL THEN ''
                      ELSE format(',"delivery":{"event_id":%s,"event_type":%s,"attempts":%s,"reason":%s}',
                                  to_json(p_delivery->>'event_id'), to_json(p_delivery->>'event_type'),
                                  COALESCE(p_delivery->>'attempts', '0'), to_json(p_delivery->>'reason')) END);
  INSERT INTO events (id, account_id, livemode, type, created, body, endpoint_ids)
  VALUES (v_id, 'acct_operational', true, p_kind, v_created, v_body, v_targets);
  INSERT INTO deliveries (id, event_id, endpoint_id, account_id, livemode, trigger, api_version)
  SELECT 'dly_' || replace(gen_random_uuid()::text, '-', ''), v_id, we.id, 'acct_operational', true, 'automatic', we.api_version
    FROM webhook_endpoints we WHERE we.id = ANY (v_targets);
  RETURN v_id;
END;
$$;

-- A merchant endpoint marked failing (the supervisor), cleared by a success (the attempt's record), or disabled
-- by its merchant: told in the transaction that changes it.
-- A trigger never fails the merchant's change: an error of ours here is a warning in Postgres's log, and the change
-- (a delivery's record, a mark, a disable) commits without its operational event.
CREATE FUNCTION operational_endpoint_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.disabled_at IS NULL AND NEW.disabled_at IS NOT NULL THEN
    PERFORM publish_operational_event('endpoint.disabled', NEW.id);
  END IF;
  IF OLD.status = 'enabled' AND NEW.status = 'failing' THEN
    PERFORM publish_operational_event('endpoint.failing', NEW.id);
  ELSIF OLD.status = 'failing' AND NEW.status = 'enabled' THEN
    PERFORM publish_operational_event('endpoint.recovered', NEW.id);
  END IF;
  RETURN NULL;
EXCEPTION WHEN OTHERS THEN
  RAISE WARNING 'operational event about % not published: %', NEW.id, SQLERRM;
  RETURN NULL;
END;
$$;
CREATE TRIGGER webhook_endpoints_operational AFTER UPDATE ON webhook_endpoints
  FOR EACH ROW WHEN (NEW.account_id <> 'acct_operational'
                     AND (OLD.status IS DISTINCT FROM NEW.status
                          OR (OLD.disabled_at IS NULL AND NEW.disabled_at IS NOT NULL)))
  EXECUTE FUNCTION operational_endpoint_change();

-- A merchant delivery that ended failed: after its last attempt (abandoned) or at its max age (expired).
CREATE FUNCTION operational_delivery_failed() RETURNS trigger LANGUAGE plpgsql AS $$
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

-- Down Migration

-- acct_operational stays: its endpoints and events may still be referenced by deliveries and attempts.

DROP TRIGGER deliveries_operational ON deliveries;
DROP FUNCTION operational_delivery_failed();
DROP TRIGGER webhook_endpoints_operational ON webhook_endpoints;
DROP FUNCTION operational_endpoint_change();
DROP FUNCTION publish_operational_event(text, text, jsonb);
