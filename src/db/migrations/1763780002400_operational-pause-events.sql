-- Up Migration

-- An endpoint paused or resumed by its owner tells the parcel system too (endpoint.paused, endpoint.resumed), in
-- the transaction that pauses or resumes it, as the other changes of an endpoint do; and an operational event's
-- data.endpoint.status says `paused` while it is.
CREATE OR REPLACE FUNCTION publish_operational_event(p_kind text, p_endpoint_id text, p_delivery jsonb DEFAULT NULL)
  RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  ep record;
  v_targets text[];
  v_id text := 'evt_' || replace(gen_random_uuid()::text, '-', '');
  v_created bigint := floor(extract(epoch FROM now()))::bigint;
  v_body text;
BEGIN
  SELECT m.id, m.account_id, m.livemode, m.url, m.local_certificate IS NOT NULL AS listening,
         CASE WHEN m.deleted_at IS NOT NULL THEN 'deleted' WHEN m.disabled_at IS NOT NULL THEN 'disabled'
              WHEN m.paused_at IS NOT NULL THEN 'paused' ELSE m.status END AS shown
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


CREATE OR REPLACE FUNCTION operational_endpoint_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.disabled_at IS NULL AND NEW.disabled_at IS NOT NULL THEN
    PERFORM publish_operational_event('endpoint.disabled', NEW.id);
  END IF;
  IF OLD.paused_at IS NULL AND NEW.paused_at IS NOT NULL THEN
    PERFORM publish_operational_event('endpoint.paused', NEW.id);
  ELSIF OLD.paused_at IS NOT NULL AND NEW.paused_at IS NULL THEN
    PERFORM publish_operational_event('endpoint.resumed', NEW.id);
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
DROP TRIGGER webhook_endpoints_operational ON webhook_endpoints;
CREATE TRIGGER webhook_endpoints_operational AFTER UPDATE ON webhook_endpoints
  FOR EACH ROW WHEN (NEW.account_id <> 'acct_operational'
                     AND (OLD.status IS DISTINCT FROM NEW.status
                          OR (OLD.disabled_at IS NULL AND NEW.disabled_at IS NOT NULL)
                          OR ((OLD.paused_at IS NULL) <> (NEW.paused_at IS NULL))))
  EXECUTE FUNCTION operational_endpoint_change();

-- Down Migration

DROP TRIGGER webhook_endpoints_operational ON webhook_endpoints;
CREATE TRIGGER webhook_endpoints_operational AFTER UPDATE ON webhook_endpoints
  FOR EACH ROW WHEN (NEW.account_id <> 'acct_operational'
                     AND (OLD.status IS DISTINCT FROM NEW.status
                          OR (OLD.disabled_at IS NULL AND NEW.disabled_at IS NOT NULL)))
  EXECUTE FUNCTION operational_endpoint_change();
CREATE OR REPLACE FUNCTION operational_endpoint_change() RETURNS trigger LANGUAGE plpgsql AS $$
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
CREATE OR REPLACE FUNCTION publish_operational_event(p_kind text, p_endpoint_id text, p_delivery jsonb DEFAULT NULL)
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

