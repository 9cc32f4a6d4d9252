import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attemptRecord } from '../../../src/core/delivery-contract';
import { createPool, type Pool } from '../../../src/db/pool';
import { loadDeliveryContext, recordAttempt, type AttemptClaim } from '../../../src/attempt';
import { releaseClaim } from '../../../src/attempt/claim';
import { publishedToOneEndpoint } from '../../helpers/delivery';
import { createAccount } from '../../helpers/fixtures';
import { testDatabaseUrl } from '../../helpers/database';
import { waitFor } from '../../helpers/wait';

/**
 * A local attempt's claim (src/db/attempt-claims.ts): each execution of a try claims the attempt
 * in the statement that reads the endpoint, and may post only when no other execution holds it, except ones the
 * workflow saw report that they posted nothing. These are the races a re-run of a try can meet.
 */
describe('attempt claims', () => {
  let pool: Pool;
  beforeAll(() => {
    pool = createPool(testDatabaseUrl());
  });
  afterAll(async () => {
    await pool?.end();
  });

  /** One attempt of a stored event to a stored endpoint, and a way to run a try of it. */
  async function anAttempt() {
    const accountId = await createAccount(pool);
    const { endpointId, eventId, input } = await publishedToOneEndpoint(pool, accountId);
    const run = (
      notPostedRuns: string[] = [],
      db: Pool = pool,
      attempt = 0,
    ): { claim: AttemptClaim; fresh: Promise<boolean | undefined> } => {
      const claim = { attemptId: input.attemptId, run: randomUUID(), try: attempt, notPostedRuns };
      const fresh = loadDeliveryContext(db, endpointId, eventId, undefined, claim).then((c) => c?.fresh);
      return { claim, fresh };
    };
    const record = (db: Pool = pool) =>
      recordAttempt(
        db,
        attemptRecord(input, { statusCode: 200, responseBody: 'ok', error: null, durationMs: 5, succeeded: true }),
      );
    return { input, run, record };
  }

  /** Resolves once `work` settled or its statement waits on a lock (bounded). */
  async function settledOrWaiting(work: Promise<unknown>): Promise<void> {
    let settled = false;
    void work
      .finally(() => {
        settled = true;
      })
      .catch(() => undefined);
    await waitFor(
      async () =>
        settled ||
        ((
          await pool.query(
            `SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%attempt_claims%'`,
          )
        ).rowCount ?? 0) > 0,
      { what: 'the claim to settle or wait' },
    );
  }

  it('lets the first run post and stops any other, before and after the record', async () => {
    const { run, record } = await anAttempt();
    expect(await run().fresh).toBe(true);
    expect(await run().fresh).toBe(false);
    await record();
    expect(await run().fresh).toBe(false);
  });

  it('hands the attempt to the next try when the holder reported that it posted nothing, and to no one else', async () => {
    const { run } = await anAttempt();
    // The first try claimed, then its answer came too late (database deadline): it failed without posting.
    const first = run([], pool, 0);
    expect(await first.fresh).toBe(true);
    // A re-run of that try after a lost workflow task does not know that: it must not post.
    expect(await run([], pool, 0).fresh).toBe(false);
    // The workflow's next try does: the failure named the run.
    expect(await run([first.claim.run], pool, 1).fresh).toBe(true);
  });

  it('a re-run of a try that posted, while that try records its attempt: not fresh (the claim outlives the record)', async () => {
    const { run, record } = await anAttempt();
    expect(await run().fresh).toBe(true);
    const tx = await pool.connect();
    try {
      await tx.query('BEGIN');
      await record(tx as unknown as Pool);
      const rerun = run().fresh;
      await settledOrWaiting(rerun);
      await tx.query('COMMIT');
      expect(await rerun).toBe(false);
    } finally {
      tx.release();
    }
  });

  it('two runs claiming at once: the second waits for the first and does not post, unless the first rolled back', async () => {
    for (const outcome of ['COMMIT', 'ROLLBACK'] as const) {
      const { run } = await anAttempt();
      const tx = await pool.connect();
      try {
        await tx.query('BEGIN');
        expect(await run([], tx as unknown as Pool).fresh).toBe(true);
        const second = run().fresh;
        await settledOrWaiting(second);
        await tx.query(outcome);
        expect(await second).toBe(outcome === 'ROLLBACK');
      } finally {
        tx.release();
      }
    }
  });

  it('a claim without a run is taken by no run; a skipped run gives back its own claim only', async () => {
    const legacy = await anAttempt();
    await pool.query('INSERT INTO attempt_claims (attempt_id, try) VALUES ($1, 0)', [legacy.input.attemptId]);
    expect(await legacy.run([], pool, 1).fresh).toBe(false);

    const { input, run } = await anAttempt();
    const holder = run();
    expect(await holder.fresh).toBe(true);
    await releaseClaim(pool, { attemptId: input.attemptId, run: randomUUID() });
    expect(await run().fresh).toBe(false);
    await releaseClaim(pool, holder.claim);
    expect(await run().fresh).toBe(true);
  });
});
