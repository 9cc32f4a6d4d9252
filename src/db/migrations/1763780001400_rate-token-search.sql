-- Up Migration

-- The earliest second from p_from on whose row, if it has one, is below the limit: in its asks sent back
-- (`deferred`), or else in both its places (`taken`) and its tokens (`granted`). It walks the endpoint's rows from
-- p_from in order and stops at the first gap or open row, so a search costs the queue ahead of it, a row per
-- second. (A series of every second of a day, filtered, was built whole before its first row was read: a
-- backlog of thousands of attempts taking their places at once spent most of its time there.)
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

-- take_rate_token as the rate-token-grants migration describes it, answering the same; its two searches for a
-- second with room are rate_token_open_second.
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
    -- with fewer than `limit` such asks already sent to it, spread over its first half as reservations are.
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

-- Nothing to undo: take_rate_token answers exactly as the function it replaced (only its search is quicker), and
-- it needs rate_token_open_second.
