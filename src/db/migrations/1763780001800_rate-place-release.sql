-- Up Migration

-- A place in a rate-limited endpoint's queue is given back when the attempt holding it will never post in it,
-- so the next attempt takes the earliest free second again instead of queueing behind places nobody redeems.
-- Only places of seconds still to come are given back: a second that has come may have handed out its tokens
-- (`granted`) to attempts posting now, and a token handed out is spent. The limit itself is kept by `granted`
-- alone, so a miscounted place costs at most a later wake-up, never a post beyond the limit.

-- One place, of second p_second, given back by the delivery that held it (skipped, or given up at its max age).
-- The second's count goes down by one; a second left with nothing counted loses its row; when it was the tail's
-- second, the tail moves back to the last second still holding places, or the queue is emptied when none does,
-- so a queue whose places are all given back starts again at the current second. A place inside the queue leaves
-- a gap that later takes do not fill (they only join at the tail). The tail's row lock serialises this with the
-- endpoint's takes. Callers give a place back once (with the write recording the skip or the give-up).
CREATE FUNCTION release_rate_place(p_endpoint text, p_second bigint) RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  cur bigint := floor(extract(epoch FROM clock_timestamp()));
  tail record;
  last_second bigint;
  last_places integer;
BEGIN
  IF p_second IS NULL OR p_second <= cur THEN
    RETURN;
  END IF;
  SELECT q.place_second, q.places INTO tail FROM endpoint_rate_queues q WHERE q.endpoint_id = p_endpoint FOR UPDATE;
  UPDATE endpoint_rate_tokens SET taken = taken - 1
   WHERE endpoint_id = p_endpoint AND second = p_second AND taken > 0;
  IF NOT FOUND THEN
    RETURN;
  END IF;
  DELETE FROM endpoint_rate_tokens
   WHERE endpoint_id = p_endpoint AND second = p_second AND taken = 0 AND granted = 0 AND deferred = 0;
  IF tail IS NULL OR tail.place_second <> p_second THEN
    RETURN;
  END IF;
  SELECT t.second, t.taken INTO last_second, last_places
    FROM endpoint_rate_tokens t
   WHERE t.endpoint_id = p_endpoint AND t.second > cur AND t.second <= p_second AND t.taken > 0
   ORDER BY t.second DESC
   LIMIT 1;
  IF last_second IS NULL THEN
    UPDATE endpoint_rate_queues SET place_second = 0, places = 0 WHERE endpoint_id = p_endpoint;
  ELSE
    UPDATE endpoint_rate_queues SET place_second = last_second, places = last_places WHERE endpoint_id = p_endpoint;
  END IF;
END
$$;

-- Every place of the endpoint given back at once: it was deleted, disabled, or its rate_limit changed or removed.
-- Seconds to come lose their rows, places and asks sent back alike; the current second keeps the tokens it handed
-- out and gives back only its places not yet redeemed; the queue's tail is emptied. An attempt still waiting for
-- a place it held asks again when it wakes and is granted only a token the second still has.
CREATE FUNCTION release_rate_places(p_endpoint text) RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  cur bigint := floor(extract(epoch FROM clock_timestamp()));
BEGIN
  PERFORM 1 FROM endpoint_rate_queues q WHERE q.endpoint_id = p_endpoint FOR UPDATE;
  DELETE FROM endpoint_rate_tokens WHERE endpoint_id = p_endpoint AND second > cur;
  UPDATE endpoint_rate_tokens SET taken = least(taken, granted), deferred = 0
   WHERE endpoint_id = p_endpoint AND second = cur;
  DELETE FROM endpoint_rate_queues WHERE endpoint_id = p_endpoint;
END
$$;

-- Endpoints deleted before now take their rows with them, as a delete does from now on.
DELETE FROM endpoint_rate_tokens t USING webhook_endpoints e WHERE e.id = t.endpoint_id AND e.deleted_at IS NOT NULL;
DELETE FROM endpoint_rate_queues q USING webhook_endpoints e WHERE e.id = q.endpoint_id AND e.deleted_at IS NOT NULL;

-- Down Migration

DROP FUNCTION release_rate_places(text);
DROP FUNCTION release_rate_place(text, bigint);
