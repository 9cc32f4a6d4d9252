-- Up Migration

-- A local attempt runs inside a workflow task: a worker that dies mid-post leaves no trace in history, and the
-- next worker runs the attempt again with the same id. Its claim, written in the same statement that reads the
-- endpoint, tells that re-run the post may already have gone out, so it is recorded as lost (timeout) instead
-- of posted twice. Rows live from the read to the attempt's record (deleted with it), so the table stays small.
CREATE TABLE attempt_claims (
  attempt_id  text NOT NULL,
  -- the n-th try of that attempt: a try that was not posted (our database down) is tried again as n + 1
  try         integer NOT NULL,
  claimed_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (attempt_id, try)
);

-- Down Migration

DROP TABLE attempt_claims;
