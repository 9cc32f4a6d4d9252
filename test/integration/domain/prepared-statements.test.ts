import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attemptRecord } from '../../../src/core/delivery-contract';
import { claimUndispatched, markDispatched } from '../../../src/db/outbox';
import { createPool, preparedStatement, type Pool } from '../../../src/db/pool';
import { verifyApiKey } from '../../../src/domain/api-keys';
import { loadDeliveryContext, recordAttempt } from '../../../src/attempt';
import { publishedToOneEndpoint } from '../../helpers/delivery';
import { createAccountWithKey } from '../../helpers/fixtures';
import { testDatabaseUrl } from '../../helpers/database';

/**
 * The statements a delivery runs (publish, hand-off, the attempt's read and its record) and the API's key lookup
 * are prepared once per connection (src/db/pool.ts preparedStatement): Postgres then binds and executes them instead
 * of parsing and planning a large CTE on every call.
 */
const HOT_PATH = [
  'api_keys_find_for_auth',
  'events_insert_with_fan_out',
  'events_claim_undispatched',
  'events_mark_dispatched',
  'endpoints_load_attempt_context',
  'delivery_attempts_insert',
];

describe('prepared statements', () => {
  // One connection: pg_prepared_statements lists only the statements of the session that asks.
  let pool: Pool;
  beforeAll(() => {
    pool = createPool(testDatabaseUrl(), 1);
  });
  afterAll(async () => {
    await pool?.end();
  });

  /** Publishes, hands off, claims, posts nothing and records one attempt: every statement of a delivery, twice. */
  async function oneDelivery(): Promise<void> {
    const { accountId, key } = await createAccountWithKey(pool);
    await verifyApiKey(pool, key);
    const { endpointId, eventId, input } = await publishedToOneEndpoint(pool, accountId);
    const claimed = await claimUndispatched(pool, { ids: [eventId], limit: 1, leaseMs: 30_000 });
    expect(claimed.map((row) => row.id)).toEqual([eventId]);
    await markDispatched(pool, [eventId]);
    const claim = { attemptId: input.attemptId, run: randomUUID(), try: 0, notPostedRuns: [] };
    const context = await loadDeliveryContext(pool, endpointId, eventId, undefined, claim);
    expect(context?.fresh).toBe(true);
    const stored = await recordAttempt(
      pool,
      attemptRecord(input, { statusCode: 200, responseBody: 'ok', error: null, durationMs: 5, succeeded: true }),
    );
    expect(stored.succeeded).toBe(true);
  }

  it('prepares every statement of the delivery path once on a connection and reuses it', async () => {
    await oneDelivery();
    const after = await pool.query<{ name: string }>('SELECT name FROM pg_prepared_statements ORDER BY name');
    expect(after.rows.map((r) => r.name)).toEqual(expect.arrayContaining(HOT_PATH));
    // The second delivery on the same connection executes the same prepared statements again: each has run twice
    // (Postgres counts a prepared statement's executions by plan kind; an unnamed query would not be counted).
    await oneDelivery();
    const runs = await pool.query<{ name: string; runs: number }>(
      'SELECT name, (generic_plans + custom_plans)::int AS runs FROM pg_prepared_statements WHERE name = ANY ($1::text[])',
      [HOT_PATH],
    );
    expect(Object.fromEntries(runs.rows.map((r) => [r.name, r.runs]))).toEqual(
      Object.fromEntries(HOT_PATH.map((name) => [name, 2])),
    );
  });

  it('refuses one name for two texts, so no connection is ever asked to prepare a name it holds with another text', () => {
    expect(preparedStatement('test_statement', 'SELECT 1')).toEqual({ name: 'test_statement', text: 'SELECT 1' });
    expect(preparedStatement('test_statement', 'SELECT 1').name).toBe('test_statement');
    expect(() => preparedStatement('test_statement', 'SELECT 2')).toThrow(/already defined with another text/);
  });
});
