-- Up Migration

-- One claim per attempt, held by one execution (run) of one of its tries, and kept after the attempt's record.
--
-- Claims were one row per try, deleted with the record, and a try was let post when its own row was new and no
-- record had this id. Two holes let one attempt id be posted twice:
-- * A try posts, and its workflow task is lost (worker killed) before the record is written. The next worker
--   runs that try again; if our database does not answer it, it reports "not posted", and the workflow's next try
--   finds a row of its own, new, and no record: it posts again. Whether an earlier try posted is a property of
--   the execution that ran it, not of its number, and only the history knows which executions posted nothing.
-- * A run whose claim statement began while the record was committing waited on the deleted row, inserted its
--   own, and read "no record" in its statement's snapshot, taken before that commit.
--
-- Now each execution names itself (run) and claims with an upsert on attempt_id that takes the row only from a
-- run the workflow saw report that it posted nothing (SignAndPostInput.notPostedRuns). The unique index
-- serialises every claim of an attempt and the upsert reads the row's latest version, whatever the snapshot;
-- since the row outlives the record, a run that comes after the record finds it. Retention deletes claims with
-- their attempts. A row claimed before this migration has no run: no later run may take it, so a try of an
-- attempt in flight during the upgrade is at worst recorded lost (as a worker crash would make it), never
-- posted twice. `try` is kept for workers still running the previous code during a rolling upgrade (their
-- plain insert now conflicts on any claim of the attempt, which errs the same safe way) and for diagnosis.
ALTER TABLE attempt_claims ADD COLUMN run text;
DELETE FROM attempt_claims c USING attempt_claims other WHERE c.attempt_id = other.attempt_id AND c.try > other.try;
ALTER TABLE attempt_claims DROP CONSTRAINT attempt_claims_pkey;
ALTER TABLE attempt_claims ALTER COLUMN try DROP NOT NULL;
ALTER TABLE attempt_claims ADD PRIMARY KEY (attempt_id);

-- Down Migration

ALTER TABLE attempt_claims DROP CONSTRAINT attempt_claims_pkey;
UPDATE attempt_claims SET try = 0 WHERE try IS NULL;
ALTER TABLE attempt_claims ALTER COLUMN try SET NOT NULL;
ALTER TABLE attempt_claims ADD PRIMARY KEY (attempt_id, try);
ALTER TABLE attempt_claims DROP COLUMN run;
