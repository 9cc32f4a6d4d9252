-- Up Migration

-- A parcel's erasure (domain/parcel-erasure.ts) marks each of its events erased. An answer recorded for an erased
-- event afterwards is stored without its body: it may echo the body as posted before the erasure (an attempt in
-- flight while it committed), or the receiver's own copy of the values. The row lock waits for an erasure of the
-- event still committing and then reads its mark; an attempt's insert takes the same lock for its foreign key
-- anyway, so the check costs one lookup of a row already at hand. A nullable column with no default: no rewrite.
ALTER TABLE events ADD COLUMN erased_at timestamptz;

CREATE FUNCTION withhold_erased_answer() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  erased timestamptz;
BEGIN
  -- no condition on the mark in the lookup: the row is locked (and re-read once an erasure commits) whatever it says
  SELECT erased_at INTO erased FROM events WHERE id = NEW.event_id FOR KEY SHARE;
  IF erased IS NOT NULL THEN
    NEW.response_body := NULL;
  END IF;
  RETURN NEW;
END;
$$;
CREATE TRIGGER delivery_attempts_withhold_erased_answer BEFORE INSERT ON delivery_attempts
  FOR EACH ROW WHEN (NEW.response_body IS NOT NULL) EXECUTE FUNCTION withhold_erased_answer();

-- Down Migration

DROP TRIGGER delivery_attempts_withhold_erased_answer ON delivery_attempts;
DROP FUNCTION withhold_erased_answer();
ALTER TABLE events DROP COLUMN erased_at;
