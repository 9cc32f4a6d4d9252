import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attemptRecord } from '../../../src/core/delivery-contract';
import { utcHourStart } from '../../../src/core/delivery-stats';
import { insertAttempt } from '../../../src/db/delivery-attempts';
import { createPool, type Pool } from '../../../src/db/pool';
import { endpointHealth, endpointsLastDay } from '../../../src/domain/delivery-stats';
import { newId } from '../../../src/core/ids';
import { publishedToOneEndpoint } from '../../helpers/delivery';
import { createAccount } from '../../helpers/fixtures';
import { testDatabaseUrl } from '../../helpers/database';

/**
 * The hourly counts the charts read (delivery_hourly_stats), written by the statement that records an attempt:
 * one count per recorded attempt by outcome, the hour truncated in UTC whatever the session's time zone.
 */
describe('delivery hourly stats', () => {
  let pool: Pool;
  beforeAll(async () => {
    // Sessions in a half-hour zone: truncating the hour in the session's zone would start hours at :30 UTC.
    const url = new URL(testDatabaseUrl());
    url.searchParams.set('options', '-c TimeZone=Asia/Kolkata');
    pool = createPool(url.toString());
  });
  afterAll(async () => {
    await pool?.end();
  });

  it('counts each recorded attempt once, by outcome, in its UTC hour, with the answers it timed', async () => {
    const accountId = await createAccount(pool);
    const { endpointId, input } = await publishedToOneEndpoint(pool, accountId);
    const record = (
      attempt: number,
      result: { statusCode: number | null; durationMs: number; succeeded: boolean },
      finalAttempt = false,
    ) =>
      insertAttempt(
        pool,
        attemptRecord(
          { ...input, attemptId: newId('attempt'), attempt, finalAttempt },
          { ...result, responseBody: null, error: result.statusCode === null ? 'timeout' : null },
        ),
      );
    const before = new Date();
    await record(1, { statusCode: 500, durationMs: 120, succeeded: false });
    await record(2, { statusCode: null, durationMs: 10_000, succeeded: false });
    await record(3, { statusCode: 503, durationMs: 130, succeeded: false }, true);
    // The same attempt again (a retried activity): the first writer's row stands and nothing is counted twice.
    await insertAttempt(
      pool,
      attemptRecord(
        { ...input, attempt: 3, finalAttempt: true },
        { statusCode: 503, responseBody: null, error: null, durationMs: 130, succeeded: false },
      ),
    );
    const after = new Date();

    const { rows } = await pool.query<{ hour: Date; utc_minute: number }>(
      `SELECT hour, extract(minute FROM hour AT TIME ZONE 'UTC')::integer AS utc_minute FROM delivery_hourly_stats WHERE endpoint_id = $1`,
      [endpointId],
    );
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) {
      expect(row.utc_minute).toBe(0);
      expect([utcHourStart(before).getTime(), utcHourStart(after).getTime()]).toContain(row.hour.getTime());
    }

    const health = await endpointHealth(pool, endpointId, '24h', after);
    expect(health.hours).toHaveLength(24);
    expect(health.totals).toMatchObject({ succeeded: 0, failed: 2, abandoned: 1, attempts: 3, successRate: 0 });
    // Only answers are timed: the 10 s timeout is not a response time.
    expect(health.p50Ms).toBeGreaterThanOrEqual(100);
    expect(health.p95Ms).toBeLessThan(150);
    const emptyHours = health.hours.filter((hour) => hour.succeeded + hour.failed + hour.abandoned === 0);
    expect(emptyHours.length).toBeGreaterThanOrEqual(22);

    const week = await endpointHealth(pool, endpointId, '7d', after);
    expect(week.hours).toHaveLength(168);
    expect(week.totals.attempts).toBe(3);
  });

  it('a success counts as succeeded, and an endpoint without attempts is a day of zeros', async () => {
    const accountId = await createAccount(pool);
    const { endpointId, input } = await publishedToOneEndpoint(pool, accountId);
    const quiet = await publishedToOneEndpoint(pool, accountId);
    await insertAttempt(
      pool,
      attemptRecord(input, { statusCode: 200, responseBody: 'ok', error: null, durationMs: 40, succeeded: true }),
    );
    const [busy, idle] = await endpointsLastDay(pool, [endpointId, quiet.endpointId]);
    expect(busy?.totals).toMatchObject({ succeeded: 1, attempts: 1, successRate: 1 });
    expect(idle?.hours).toHaveLength(24);
    expect(idle?.totals).toMatchObject({ attempts: 0, successRate: null });
  });
});
