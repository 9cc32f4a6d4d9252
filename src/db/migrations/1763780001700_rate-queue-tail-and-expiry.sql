-- Up Migration

-- The tail of each rate-limited endpoint's queue: the last second that places were handed out in and how many it
-- has (`place_second`, `places`), and the same for due asks sent back to a coming second (`ask_second`, `asks`).
-- Places are handed out in order of asking and never before the tail, so the earliest second with room is the
-- tail itself (while it has fewer than `limit`), the second after it, or the asking attempt's own earliest second
-- when that lies beyond the tail. A take reads and moves the tail in one row write: it costs the same whatever the
-- queue's depth, where walking the endpoint's rows from now cost a row per queued second.
CREATE TABLE endpoint_rate_queues (
  endpoint_id text PRIMARY KEY,
  place_second bigint NOT NULL,
  places integer NOT NULL,
  ask_second bigint NOT NULL,
  asks integer NOT NULL
);

-- Queues already waiting keep their order: each tail starts at the last second holding places or asks.
INSERT INTO endpoint_rate_queues (endpoint_id, place_second, places, ask_second, asks)
SELECT endpoint_id,
       coalesce(max(second) FILTER (WHERE taken > 0), 0),
       coalesce((array_agg(taken ORDER BY second DESC) FILTER (WHERE taken > 0))[1], 0),
       coalesce(max(second) FILTER (WHERE deferred > 0), 0),
       coalesce((array_agg(deferred ORDER BY second DESC) FILTER (WHERE deferred > 0))[1], 0)
  FROM endpoint_rate_tokens
 GROUP BY endpoint_id;

-- The next place (p_asks false) or due ask (p_asks true) of the endpoint's queue from second p_from on: the tail
-- while it has room, else the second after it, or p_from when the tail is behind it. The row's lock serialises the
-- endpoint's takes; `nth` is the place's rank within its second (1 .. limit).
CREATE FUNCTION rate_queue_next(p_endpoint text, p_from bigint, p_limit integer, p_asks boolean, OUT second bigint, OUT nth integer)
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  IF p_asks THEN
    INSERT INTO endpoint_rate_queues AS q (endpoint_id, place_second, places, ask_second, asks) VALUES (p_endpoint, 0, 0, p_from, 1)
    ON CONFLICT (endpoint_id) DO UPDATE
      SET ask_second = CASE WHEN q.ask_second < p_from THEN p_from WHEN q.asks < p_limit THEN q.ask_second ELSE q.ask_second + 1 END,
          asks = CASE WHEN q.ask_second < p_from OR q.asks >= p_limit THEN 1 ELSE q.asks + 1 END
    RETURNING q.ask_second, q.asks INTO second, nth;
  ELSE
    INSERT INTO endpoint_rate_queues AS q (endpoint_id, place_second, places, ask_second, asks) VALUES (p_endpoint, p_from, 1, 0, 0)
    ON CONFLICT (endpoint_id) DO UPDATE
      SET place_second = CASE WHEN q.place_second < p_from THEN p_from WHEN q.places < p_limit THEN q.place_second ELSE q.place_second + 1 END,
          places = CASE WHEN q.place_second < p_from OR q.places >= p_limit THEN 1 ELSE q.places + 1 END
    RETURNING q.place_second, q.places INTO second, nth;
  END IF;
END
$$;

-- take_rate_token answering as the rate-token-grants migration describes, each answer in a bounded number of row
-- reads and writes: the tail's row, the asked second's row, and the deletion of seconds long past.
CREATE OR REPLACE FUNCTION take_rate_token(
  p_endpoint text, p_limit integer, p_not_before timestamptz, p_reserved bigint, p_reserve boolean, p_usable_ms integer,
  OUT wait_until_ms double precision, OUT reserved_second bigint, OUT granted_second bigint
) LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  now_ms double precision := extract(epoch FROM clock_timestamp()) * 1000;
  cur bigint := floor(now_ms / 1000);
  usable boolean := now_ms - cur * 1000 < p_usable_ms;
  held_until bigint;
  start bigint;
  tail record;
  candidate bigint;
  fresh_row boolean;
  nth integer;
BEGIN
  IF p_limit IS NULL THEN
    IF p_not_before IS NOT NULL AND p_not_before > clock_timestamp() THEN
      wait_until_ms := extract(epoch FROM p_not_before) * 1000;
    END IF;
    RETURN;
  END IF;
  held_until := ceil(extract(epoch FROM p_not_before))::bigint;
  IF p_reserved IS NOT NULL THEN
    -- Not due yet (its second ahead, or a Retry-After since): wait for it, keeping the place.
    IF greatest(p_reserved, coalesce(held_until, p_reserved)) > cur THEN
      wait_until_ms := greatest(p_reserved, coalesce(held_until, p_reserved)) * 1000;
      reserved_second := p_reserved;
      RETURN;
    END IF;
    IF usable THEN
      INSERT INTO endpoint_rate_tokens AS t (endpoint_id, second, taken, granted) VALUES (p_endpoint, cur, 0, 1)
      ON CONFLICT (endpoint_id, second) DO UPDATE SET granted = t.granted + 1 WHERE t.granted < p_limit;
      IF FOUND THEN
        granted_second := cur;
        RETURN;
      END IF;
    END IF;
    -- Due, but this second's tokens are gone or it is too late in it: asked again early in the first coming second
    -- with fewer than `limit` such asks, spread over its first half as places are.
    SELECT q.second, q.nth INTO candidate, nth FROM rate_queue_next(p_endpoint, cur + 1, p_limit, true) q;
    INSERT INTO endpoint_rate_tokens AS t (endpoint_id, second, taken, deferred) VALUES (p_endpoint, candidate, 0, 1)
    ON CONFLICT (endpoint_id, second) DO UPDATE SET deferred = t.deferred + 1;
    wait_until_ms := candidate * 1000 + floor((nth - 1) * (p_usable_ms / 2.0) / p_limit);
    reserved_second := candidate;
    RETURN;
  END IF;
  start := greatest(CASE WHEN usable THEN cur ELSE cur + 1 END, held_until);
  LOOP
    -- The current second is open to a newcomer only while its tokens last: due places may have taken them.
    IF start = cur AND EXISTS (SELECT 1 FROM endpoint_rate_tokens t
                                WHERE t.endpoint_id = p_endpoint AND t.second = cur AND t.granted >= p_limit) THEN
      start := cur + 1;
    END IF;
    IF NOT p_reserve THEN
      -- The early attempt takes a token of this second or nothing: it only looks at the tail.
      SELECT q.place_second, q.places INTO tail FROM endpoint_rate_queues q WHERE q.endpoint_id = p_endpoint;
      candidate := CASE WHEN tail IS NULL OR tail.place_second < start THEN start
                        WHEN tail.places < p_limit THEN tail.place_second ELSE tail.place_second + 1 END;
      IF candidate > cur THEN
        wait_until_ms := candidate * 1000;
        RETURN;
      END IF;
    END IF;
    SELECT q.second, q.nth INTO candidate, nth FROM rate_queue_next(p_endpoint, start, p_limit, false) q;
    IF candidate = cur THEN
      INSERT INTO endpoint_rate_tokens AS t (endpoint_id, second, taken, granted) VALUES (p_endpoint, cur, 1, 1)
      ON CONFLICT (endpoint_id, second) DO UPDATE SET taken = t.taken + 1, granted = t.granted + 1 WHERE t.granted < p_limit
      RETURNING (xmax = 0) INTO fresh_row;
      IF NOT FOUND THEN
        -- A due place took the second's last token meanwhile: this place is let go, and the next second asked.
        start := cur + 1;
        CONTINUE;
      END IF;
      granted_second := cur;
    ELSE
      INSERT INTO endpoint_rate_tokens AS t (endpoint_id, second, taken) VALUES (p_endpoint, candidate, 1)
      ON CONFLICT (endpoint_id, second) DO UPDATE SET taken = t.taken + 1
      RETURNING (xmax = 0) INTO fresh_row;
      -- The n-th place of a second wakes n/limit into the first half of its usable part: the second's attempts
      -- reach the workers (and the receiver) spread out, not all at its first millisecond.
      wait_until_ms := candidate * 1000 + floor((nth - 1) * (p_usable_ms / 2.0) / p_limit);
      reserved_second := candidate;
    END IF;
    IF fresh_row THEN
      DELETE FROM endpoint_rate_tokens WHERE endpoint_id = p_endpoint AND second < cur - 60;
    END IF;
    RETURN;
  END LOOP;
END
$$;

DROP FUNCTION rate_token_open_second(text, bigint, integer, boolean);

-- A delivery given up at its max age (DELIVERY_MAX_AGE) leaves a row in the deliveries log with no answer and
-- `reason` 'expired', under the id of the attempt it did not make; rows of attempts made have none.
ALTER TABLE delivery_attempts ADD COLUMN reason text;

-- A one-endpoint delivery whose attempt 1 found no rate token at hand-off waits in the outbox, not in Temporal: its
-- row keeps the place it took (`first_attempt_place`, Unix seconds) and is claimed again when the place comes (an
-- event's lease, a delivery's dispatch_after, runs until then); attempt 1 is then made with that place.
ALTER TABLE events ADD COLUMN first_attempt_place bigint;
ALTER TABLE deliveries ADD COLUMN first_attempt_place bigint;

-- Down Migration

ALTER TABLE deliveries DROP COLUMN first_attempt_place;
ALTER TABLE events DROP COLUMN first_attempt_place;
ALTER TABLE delivery_attempts DROP COLUMN reason;

-- The search of the rate-token-search migration, and take_rate_token using it again.
CREATE OR REPLACE FUNCTION rate_token_open_second(p_endpoint text, p_from bigint, p_limit integer, p_deferred boolean)
RETURNS bigint LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  candidate bigint := p_from;
  r record;
BEGIN
  FOR r IN SELECT t.second,
                  CASE WHEN p_deferred THEN t.deferred >= p_limit ELSE t.taken >= p_limit OR t.granted >= p_limit END AS full
             FROM endpoint_rate_tokens t
            WHERE t.endpoint_id = p_endpoint AND t.second >= p_from
            ORDER BY t.second
  LOOP
    EXIT WHEN r.second > candidate OR NOT r.full;
    candidate := r.second + 1;
  END LOOP;
  RETURN candidate;
END
$$;

CREATE OR REPLACE FUNCTION take_rate_token(
  p_endpoint text, p_limit integer, p_not_before timestamptz, p_reserved bigint, p_reserve boolean, p_usable_ms integer,
  OUT wait_until_ms double precision, OUT reserved_second bigint, OUT granted_second bigint
) LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  now_ms double precision := extract(epoch FROM clock_timestamp()) * 1000;
  cur bigint := floor(now_ms / 1000);
  usable boolean := now_ms - cur * 1000 < p_usable_ms;
  held_until bigint;
  start bigint;
  candidate bigint;
  fresh_row boolean;
  nth integer;
BEGIN
  IF p_limit IS NULL THEN
    IF p_not_before IS NOT NULL AND p_not_before > clock_timestamp() THEN
      wait_until_ms := extract(epoch FROM p_not_before) * 1000;
    END IF;
    RETURN;
  END IF;
  held_until := ceil(extract(epoch FROM p_not_before))::bigint;
  IF p_reserved IS NOT NULL THEN
    IF greatest(p_reserved, coalesce(held_until, p_reserved)) > cur THEN
      wait_until_ms := greatest(p_reserved, coalesce(held_until, p_reserved)) * 1000;
      reserved_second := p_reserved;
      RETURN;
    END IF;
    IF usable THEN
      INSERT INTO endpoint_rate_tokens AS t (endpoint_id, second, taken, granted) VALUES (p_endpoint, cur, 0, 1)
      ON CONFLICT (endpoint_id, second) DO UPDATE SET granted = t.granted + 1 WHERE t.granted < p_limit;
      IF FOUND THEN
        granted_second := cur;
        RETURN;
      END IF;
    END IF;
    start := cur + 1;
    LOOP
      candidate := rate_token_open_second(p_endpoint, start, p_limit, true);
      INSERT INTO endpoint_rate_tokens AS t (endpoint_id, second, taken, deferred) VALUES (p_endpoint, candidate, 0, 1)
      ON CONFLICT (endpoint_id, second) DO UPDATE SET deferred = t.deferred + 1 WHERE t.deferred < p_limit
      RETURNING t.deferred INTO nth;
      IF FOUND THEN
        wait_until_ms := candidate * 1000 + floor((nth - 1) * (p_usable_ms / 2.0) / p_limit);
        reserved_second := candidate;
        RETURN;
      END IF;
      start := candidate;
    END LOOP;
  END IF;
  start := CASE WHEN usable THEN cur ELSE cur + 1 END;
  start := greatest(start, held_until);
  LOOP
    candidate := rate_token_open_second(p_endpoint, start, p_limit, false);
    IF candidate > cur AND NOT p_reserve THEN
      wait_until_ms := candidate * 1000;
      RETURN;
    END IF;
    INSERT INTO endpoint_rate_tokens AS t (endpoint_id, second, taken, granted)
    VALUES (p_endpoint, candidate, 1, CASE WHEN candidate = cur THEN 1 ELSE 0 END)
    ON CONFLICT (endpoint_id, second) DO UPDATE
      SET taken = t.taken + 1, granted = t.granted + CASE WHEN candidate = cur THEN 1 ELSE 0 END
      WHERE t.taken < p_limit AND t.granted < p_limit
    RETURNING (xmax = 0), t.taken INTO fresh_row, nth;
    IF FOUND THEN
      IF fresh_row THEN
        DELETE FROM endpoint_rate_tokens WHERE endpoint_id = p_endpoint AND second < cur - 60;
      END IF;
      IF candidate > cur THEN
        wait_until_ms := candidate * 1000 + floor((nth - 1) * (p_usable_ms / 2.0) / p_limit);
        reserved_second := candidate;
      ELSE
        granted_second := candidate;
      END IF;
      RETURN;
    END IF;
    start := candidate;
  END LOOP;
END
$$;

DROP FUNCTION rate_queue_next(text, bigint, integer, boolean);
DROP TABLE endpoint_rate_queues;
