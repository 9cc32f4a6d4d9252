-- Up Migration

-- A rate limit is counted where it is judged: the posts that go out in a clock second. Per endpoint and second,
--   taken     places in the queue: attempts told to wake in that second (and tokens granted at once in it);
--   granted   tokens handed out to post in that second: the limit itself;
--   deferred  due attempts that found no token and were told to ask again in that second.
-- A place does not expire with its second: an attempt that wakes late (its worker or the Temporal server busy)
-- posts in the second it asks in when that second has a token left, instead of giving its token up and going
-- to the back of the queue. Lateness costs a delay, never a token or a place, so a busy worker cannot turn a
-- backlog into wake-ups that all come too late to post.
ALTER TABLE endpoint_rate_tokens ADD COLUMN granted integer NOT NULL DEFAULT 0;
ALTER TABLE endpoint_rate_tokens ADD COLUMN deferred integer NOT NULL DEFAULT 0;

-- One attempt asks for a token before it posts (db/attempt-claims.ts calls this inside the attempt's read).
-- When the attempt may post now, wait_until_ms is null and granted_second names the second its token counts in
-- (null when the endpoint has no limit): the attempt posts only while the clock is still early in that second.
-- Otherwise wait_until_ms is when to ask again (Unix ms), and reserved_second the second of its place in the
-- queue, which it carries to its next ask.
--   p_limit       the endpoint's rate_limit; null: no counting, only not_before holds the attempt back.
--   p_not_before  the endpoint's not_before (Retry-After): nothing goes out before it.
--   p_reserved    the second of this attempt's place in the queue, from its last ask; null when it has none.
--   p_reserve     false: take a token of the current second or nothing (the dispatcher's early attempt).
--   p_usable_ms   a token of the current second is handed out only this far into the second, so its post reaches
--                 the receiver within the same clock second.
-- A place in the queue is the earliest second whose reservations are below the limit, so a backlog is woken at
-- the limit and in order of asking, not all at once. Once its second has come, the place is due: it is granted in
-- the first second that has a token left while the clock is early in it, however late it asks. An attempt asking
-- without a place is granted only when the current second has room in both counts, so it never overtakes the queue.
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
    -- Due, but this second's tokens are gone or it is too late in it: asked again in the earliest coming second
    -- with fewer than `limit` such asks already sent to it, spread over its first half as reservations are. A
    -- crowd that woke late together is so asked again at the limit's pace, not all at the next second.
    start := cur + 1;
    LOOP
      SELECT s INTO candidate
        FROM generate_series(start, start + 86400) AS s
       WHERE NOT EXISTS (SELECT 1 FROM endpoint_rate_tokens t
                          WHERE t.endpoint_id = p_endpoint AND t.second = s AND t.deferred >= p_limit)
       LIMIT 1;
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
    SELECT s INTO candidate
      FROM generate_series(start, start + 86400) AS s
     WHERE NOT EXISTS (SELECT 1 FROM endpoint_rate_tokens t
                        WHERE t.endpoint_id = p_endpoint AND t.second = s AND (t.taken >= p_limit OR t.granted >= p_limit))
     LIMIT 1;
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
        -- The n-th reservation of a second wakes n/limit into the first half of its usable part: the second's
        -- attempts reach the workers (and the receiver) spread out, not all at its first millisecond.
        wait_until_ms := candidate * 1000 + floor((nth - 1) * (p_usable_ms / 2.0) / p_limit);
        reserved_second := candidate;
      ELSE
        granted_second := candidate;
      END IF;
      RETURN;
    END IF;
    -- Another attempt took the last token of that second meanwhile: look again from there.
    start := candidate;
  END LOOP;
END
$$;

-- Down Migration

-- The function as the endpoint-rate-limits migration created it: a reservation expires with its second.
CREATE OR REPLACE FUNCTION take_rate_token(
  p_endpoint text, p_limit integer, p_not_before timestamptz, p_reserved bigint, p_reserve boolean, p_usable_ms integer,
  OUT wait_until_ms double precision, OUT reserved_second bigint, OUT granted_second bigint
) LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  now_ms double precision := extract(epoch FROM clock_timestamp()) * 1000;
  cur bigint := floor(now_ms / 1000);
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
  start := CASE WHEN now_ms - cur * 1000 < p_usable_ms THEN cur ELSE cur + 1 END;
  start := greatest(start, held_until);
  -- A reservation is redeemed anywhere in its own second (the attempt then checks it can still post in time)
  -- and kept while that second is ahead; one whose second has passed, or that not_before overtook, is given up.
  IF p_reserved >= cur AND p_reserved >= coalesce(held_until, p_reserved) THEN
    IF p_reserved = cur THEN
      granted_second := cur;
      RETURN;
    END IF;
    wait_until_ms := p_reserved * 1000;
    reserved_second := p_reserved;
    RETURN;
  END IF;
  LOOP
    SELECT s INTO candidate
      FROM generate_series(start, start + 86400) AS s
     WHERE NOT EXISTS (SELECT 1 FROM endpoint_rate_tokens t
                        WHERE t.endpoint_id = p_endpoint AND t.second = s AND t.taken >= p_limit)
     LIMIT 1;
    IF candidate > cur AND NOT p_reserve THEN
      wait_until_ms := candidate * 1000;
      RETURN;
    END IF;
    INSERT INTO endpoint_rate_tokens AS t (endpoint_id, second, taken) VALUES (p_endpoint, candidate, 1)
    ON CONFLICT (endpoint_id, second) DO UPDATE SET taken = t.taken + 1 WHERE t.taken < p_limit
    RETURNING (xmax = 0), t.taken INTO fresh_row, nth;
    IF FOUND THEN
      IF fresh_row THEN
        DELETE FROM endpoint_rate_tokens WHERE endpoint_id = p_endpoint AND second < cur - 60;
      END IF;
      IF candidate > cur THEN
        -- The n-th reservation of a second wakes n/limit into the first half of its usable part: the second's
        -- attempts reach the workers (and the receiver) spread out, not all at its first millisecond.
        wait_until_ms := candidate * 1000 + floor((nth - 1) * (p_usable_ms / 2.0) / p_limit);
        reserved_second := candidate;
      ELSE
        granted_second := candidate;
      END IF;
      RETURN;
    END IF;
    -- Another attempt took the last token of that second meanwhile: look again from there.
    start := candidate;
  END LOOP;
END
$$;

ALTER TABLE endpoint_rate_tokens DROP COLUMN deferred;
ALTER TABLE endpoint_rate_tokens DROP COLUMN granted;
