import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { newId } from '../../../core/ids';
import { dropDatabase, prepareDatabase } from '../../../db/migrate';
import { createPool, type Pool } from '../../../db/pool';
import { operationalState } from '../../../domain/operational-state';
import { createEndpoint } from '../../helpers/delivery';
import { createAccount } from '../../helpers/fixtures';

/** What the metrics page reads from Postgres, on a database of its own: the counts are global. */
describe('operational state', () => {
  const databaseUrl = `${inject('databaseUrl')}_opstate`;
  let pool: Pool;
  beforeAll(async () => {
    await prepareDatabase(databaseUrl);
    pool = createPool(databaseUrl);
  });
  afterAll(async () => {
    await pool?.end();
    await dropDatabase(databaseUrl);
  });

  async function delivery(accountId: string, endpointId: string, row: { trigger: string; status: string; attempts: number; ageSeconds: number }) {
    const eventId = newId('event');
    await pool.query(
      `INSERT INTO events (id, account_id, livemode, type, created, body, endpoint_ids, inserted_at)
       VALUES ($1, $2, false, 'parcel.created', 0, '{}', ARRAY[$3], now() - make_interval(secs => $4))`,
      [eventId, accountId, endpointId, row.ageSeconds],
    );
    await pool.query(
      `INSERT INTO deliveries (id, event_id, endpoint_id, account_id, livemode, trigger, status, attempts, created_at)
       VALUES ($1, $2, $3, $4, false, $5, $6, $7, now() - make_interval(secs => $8))`,
      [`dly_${newId('event').slice(4)}`, eventId, endpointId, accountId, row.trigger, row.status, row.attempts, row.ageSeconds],
    );
  }

  it('counts enabled failing endpoints per mode, and automatic deliveries never attempted past the grace', async () => {
    expect(await operationalState(pool)).toEqual({
      failingEndpoints: [{ livemode: false, count: 0 }, { livemode: true, count: 0 }],
      outbox: { pending: 0, oldestPendingAgeSeconds: 0 },
    });
    const accountId = await createAccount(pool);
    const endpoint = await createEndpoint(pool, { accountId, url: 'https://merchant.example/hooks' });
    const live = await createEndpoint(pool, { accountId, url: 'https://merchant.example/live', livemode: true });
    const disabled = await createEndpoint(pool, { accountId, url: 'https://merchant.example/off' });
    await pool.query(`UPDATE webhook_endpoints SET status = 'failing' WHERE id = ANY ($1)`, [[endpoint.id, live.id, disabled.id]]);
    await pool.query('UPDATE webhook_endpoints SET disabled_at = now() WHERE id = $1', [disabled.id]);

    await delivery(accountId, endpoint.id, { trigger: 'automatic', status: 'pending', attempts: 0, ageSeconds: 300 });
    await delivery(accountId, endpoint.id, { trigger: 'automatic', status: 'pending', attempts: 0, ageSeconds: 90 });
    // Not waiting for a hand-off: too recent, already attempted, skipped, paced on purpose.
    await delivery(accountId, endpoint.id, { trigger: 'automatic', status: 'pending', attempts: 0, ageSeconds: 1 });
    await delivery(accountId, endpoint.id, { trigger: 'automatic', status: 'pending', attempts: 1, ageSeconds: 600 });
    await delivery(accountId, endpoint.id, { trigger: 'automatic', status: 'skipped', attempts: 0, ageSeconds: 600 });
    await delivery(accountId, endpoint.id, { trigger: 'recover', status: 'pending', attempts: 0, ageSeconds: 600 });

    const state = await operationalState(pool);
    expect(state.failingEndpoints).toEqual([{ livemode: false, count: 1 }, { livemode: true, count: 1 }]);
    expect(state.outbox.pending).toBe(2);
    expect(state.outbox.oldestPendingAgeSeconds).toBeGreaterThanOrEqual(300);
    expect(state.outbox.oldestPendingAgeSeconds).toBeLessThan(330);
  });
});
