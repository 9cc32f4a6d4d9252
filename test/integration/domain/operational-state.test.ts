import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../../src/core/ids';
import { createPool, type Pool } from '../../../src/db/pool';
import { operationalState } from '../../../src/domain/operational-state';
import { createEndpoint } from '../../helpers/delivery';
import { createAccount } from '../../helpers/fixtures';
import { testDatabaseUrl } from '../../helpers/database';

/** What the metrics page reads from Postgres, on the file's own database: the counts are global. */
describe('operational state', () => {
  let pool: Pool;
  beforeAll(() => {
    pool = createPool(testDatabaseUrl());
  });
  afterAll(async () => {
    await pool?.end();
  });

  /** An event stored `ageSeconds` ago, handed to Temporal or still waiting in the outbox. */
  async function storedEvent(accountId: string, endpointId: string, row: { dispatched: boolean; ageSeconds: number }) {
    await pool.query(
      `INSERT INTO events (id, account_id, livemode, type, created, body, endpoint_ids, inserted_at, dispatched_at)
       VALUES ($1, $2, false, 'parcel.created', 0, '{}', ARRAY[$3], now() - make_interval(secs => $4),
               CASE WHEN $5 THEN now() END)`,
      [newId('event'), accountId, endpointId, row.ageSeconds, row.dispatched],
    );
  }

  it('counts enabled failing endpoints per mode, and events stored but not yet handed to Temporal', async () => {
    expect(await operationalState(pool)).toEqual({
      failingEndpoints: [
        { livemode: false, count: 0 },
        { livemode: true, count: 0 },
      ],
      outbox: { pending: 0, oldestPendingAgeSeconds: 0 },
    });
    const accountId = await createAccount(pool);
    const endpoint = await createEndpoint(pool, { accountId, url: 'https://merchant.example/hooks' });
    const live = await createEndpoint(pool, { accountId, url: 'https://merchant.example/live', livemode: true });
    const disabled = await createEndpoint(pool, { accountId, url: 'https://merchant.example/off' });
    await pool.query(`UPDATE webhook_endpoints SET status = 'failing' WHERE id = ANY ($1)`, [
      [endpoint.id, live.id, disabled.id],
    ]);
    await pool.query('UPDATE webhook_endpoints SET disabled_at = now() WHERE id = $1', [disabled.id]);

    await storedEvent(accountId, endpoint.id, { dispatched: false, ageSeconds: 300 });
    await storedEvent(accountId, endpoint.id, { dispatched: false, ageSeconds: 1 });
    // Handed off: not waiting, however old.
    await storedEvent(accountId, endpoint.id, { dispatched: true, ageSeconds: 600 });

    const state = await operationalState(pool);
    expect(state.failingEndpoints).toEqual([
      { livemode: false, count: 1 },
      { livemode: true, count: 1 },
    ]);
    expect(state.outbox.pending).toBe(2);
    expect(state.outbox.oldestPendingAgeSeconds).toBeGreaterThanOrEqual(300);
    expect(state.outbox.oldestPendingAgeSeconds).toBeLessThan(330);
  });
});
