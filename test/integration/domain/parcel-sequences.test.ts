import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool, type Pool } from '../../../src/db/pool';
import { publishEvent } from '../../../src/domain/events';
import { createEndpoint, parcel } from '../../helpers/delivery';
import { createAccount } from '../../helpers/fixtures';
import { testDatabaseUrl } from '../../helpers/database';

/**
 * A parcel's numbers run 1, 2, 3 ... without gaps, whatever the publishers do: a publish retried while the first
 * try is still running (a concurrent publish of the same id) must not take a number of its own.
 */
describe('parcel sequences', () => {
  let pool: Pool;
  beforeAll(() => {
    // Enough connections for every concurrent publish to be in flight at once.
    pool = createPool(testDatabaseUrl(), 36);
  });
  afterAll(async () => {
    await pool?.end();
  });

  const settlement = (parcelId: string) => ({
    parcel: { id: parcelId, parcel_number: 'PCL-1' },
    cod_settlement: { id: 'cods_1', amount: 350, currency: 'KES', settled_at: 1764000000 },
  });

  it('concurrent publishes of the same ids take one number per event, with no gap', async () => {
    const accountId = await createAccount(pool);
    await createEndpoint(pool, { accountId, url: 'https://merchant.example/hooks' });
    const ids = Array.from({ length: 12 }, (_, i) => `evt_seq_${i}`);
    // Every id published three times at once, every id of the same parcel; the last a settlement.
    const publishes = ids.flatMap((id, i) =>
      [0, 1, 2].map(() =>
        publishEvent(
          { pool },
          i === ids.length - 1
            ? { accountId, livemode: false, id, type: 'cod.settled', data: settlement('p_race') }
            : { accountId, livemode: false, id, type: 'parcel.in_transit', data: { parcel: parcel({ id: 'p_race' }) } },
        ),
      ),
    );
    const results = await Promise.all(publishes);

    expect(results.filter((r) => r.created)).toHaveLength(ids.length);
    // Every answer for one id shows the same number, the stored one.
    const byId = new Map<string, Set<number | undefined>>();
    for (const r of results) byId.set(r.event.id, (byId.get(r.event.id) ?? new Set()).add(r.event.sequence));
    for (const numbers of byId.values()) expect(numbers.size).toBe(1);

    const { rows } = await pool.query<{ sequence: number; body: string }>(
      `SELECT sequence, body FROM events WHERE account_id = $1 AND parcel_id = 'p_race' ORDER BY sequence`,
      [accountId],
    );
    expect(rows.map((row) => row.sequence)).toEqual(ids.map((_, i) => i + 1));
    for (const row of rows) expect(JSON.parse(row.body).sequence).toBe(row.sequence);
    const last = await pool.query<{ last_sequence: number }>(
      `SELECT last_sequence FROM parcel_sequences WHERE account_id = $1 AND parcel_id = 'p_race'`,
      [accountId],
    );
    expect(last.rows[0]!.last_sequence).toBe(ids.length);
  });

  it('numbers a settlement in its parcel’s lane, sent in either version’s shape, and stores the newest shape', async () => {
    const accountId = await createAccount(pool);
    const created = await publishEvent(
      { pool },
      { accountId, livemode: false, type: 'parcel.created', data: { parcel: parcel({ id: 'p_cod' }) } },
    );
    const asBefore = await publishEvent(
      { pool },
      {
        accountId,
        livemode: false,
        type: 'cod.settled',
        data: {
          cod_settlement: {
            id: 'cods_2',
            parcel_id: 'p_cod',
            parcel_number: 'PCL-9',
            amount: 100,
            currency: 'KES',
            settled_at: 1764000001,
          },
        },
      },
    );
    const asNewest = await publishEvent(
      { pool },
      { accountId, livemode: false, type: 'cod.settled', data: settlement('p_cod') },
    );
    expect([created.event.sequence, asBefore.event.sequence, asNewest.event.sequence]).toEqual([1, 2, 3]);
    expect([asBefore.inputVersion, asNewest.inputVersion]).toEqual(['2026-11-21', '2026-12-01']);
    const { rows } = await pool.query<{ body: string; parcel_id: string }>(
      'SELECT body, parcel_id FROM events WHERE id = $1',
      [asBefore.event.id],
    );
    expect(rows[0]!.parcel_id).toBe('p_cod');
    expect(JSON.parse(rows[0]!.body).data).toEqual({
      parcel: { id: 'p_cod', parcel_number: 'PCL-9' },
      cod_settlement: { id: 'cods_2', amount: 100, currency: 'KES', settled_at: 1764000001 },
    });
  });
});
