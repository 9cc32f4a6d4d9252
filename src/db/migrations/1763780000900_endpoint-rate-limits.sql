-- Up Migration

-- Receivers protected: an endpoint may set a rate limit (deliveries per clock second), and an endpoint that
-- answered 429 or 503 with Retry-After is posted to by nobody before that time (not_before, capped at 6 hours).
ALTER TABLE webhook_endpoints ADD COLUMN rate_limit integer CHECK (rate_limit BETWEEN 1 AND 1000);
ALTER TABLE webhook_endpoints ADD COLUMN not_before timestamptz;

-- The tokens of a rate-limited endpoint, counted per clock second (Unix seconds of Postgres's clock, the one
-- clock every worker shares): `taken` posts went out, or are reserved to go out, within that second. Rows of
-- seconds past are deleted by take_rate_token itself, whenever it opens a new second for the endpoint.
CREATE TABLE endpoint_rate_tokens (
  endpoint_id text NOT NULL,
  second bigint NOT NULL,
  taken integer NOT NULL,
  PRIMARY KEY (endpoint_id, second)
);

-- One attempt asks for a token before it posts (db/attempt-claims.ts calls this inside the attempt's read).
-- When the attempt may post now, wait_until_ms is null and granted_second names the second its token counts in
-- (null when the endpoint has no limit): the attempt posts only while the clock is still early in that second.
-- Otherwise wait_until_ms is when to ask again (Unix ms), and reserved_second the second it holds a token of,
-- which the next ask redeems while the clock is in that second.
--   p_limit       the endpoint's rate_limit; null: no counting, only not_before holds the attempt back.
--   p_not_before  the endpoint's not_before (Retry-After): nothing goes out before it.
--   p_reserved    the second this attempt reserved when it was last throttled; null when none.
--   p_reserve     false: take a token of the current second or nothing (the dispatcher's early attempt).
--   p_usable_ms   a token of the current second is taken only this far into the second, so its post reaches
--                 the receiver within the same clock second; later, the next second is reserved instead.
-- The earliest second with room is reserved, not the next one, so a backlog drains at the limit in order of
-- asking instead of every waiter asking again at each second.
CREATE FUNCTION take_rate_token(
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

-- Down Migration

DROP FUNCTION take_rate_token(text, integer, timestamptz, bigint, boolean, integer);
DROP TABLE endpoint_rate_tokens;
ALTER TABLE webhook_endpoints DROP COLUMN not_before;
ALTER TABLE webhook_endpoints DROP COLUMN rate_limit;
