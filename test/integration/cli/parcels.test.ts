import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool, type Pool } from '../../../src/db/pool';
import { publishEvent } from '../../../src/domain/events';
import { CLI_TEST_TIMEOUT_MS, runCli } from '../../helpers/cli';
import { testDatabaseUrl } from '../../helpers/database';
import { parcel } from '../../helpers/delivery';
import { createAccount } from '../../helpers/fixtures';

const cli = (...args: string[]) => runCli(args, {}, 60_000);

describe('CLI: parcels erase', () => {
  let pool: Pool;
  beforeAll(() => {
    pool = createPool(testDatabaseUrl());
  });
  afterAll(async () => {
    await pool?.end();
  });

  const bodyOf = async (id: string) =>
    JSON.parse((await pool.query<{ body: string }>('SELECT body FROM events WHERE id = $1', [id])).rows[0]!.body) as {
      data: { parcel: Record<string, unknown> };
      sequence?: number;
    };

  it(
    "erases the parcel's events of the account in both modes, again harmlessly, and nobody else's",
    async () => {
      const accountId = await createAccount(pool);
      const otherAccount = await createAccount(pool);
      const parcelId = `p-${randomBytes(6).toString('hex')}`;
      const personal = { recipient_name: 'Amina "Wanjirü"', description: 'Two shirts' };
      const publish = async (account: string, livemode: boolean, type = 'parcel.in_transit') =>
        (
          await publishEvent(
            { pool },
            { accountId: account, livemode, type, data: { parcel: parcel({ id: parcelId, ...personal }) } },
          )
        ).event.id;
      const test = await publish(accountId, false);
      const live = await publish(accountId, true, 'parcel.delivered');
      const settled = (
        await publishEvent(
          { pool },
          {
            accountId,
            livemode: false,
            type: 'cod.settled',
            data: {
              parcel: { id: parcelId, parcel_number: 'PCL-1' },
              cod_settlement: { id: 'cods_1', amount: 350, currency: 'KES', settled_at: 1764000000 },
            },
          },
        )
      ).event.id;
      const untouched = await publish(otherAccount, false);
      const before = await bodyOf(test);

      const erased = await cli('parcels', 'erase', '--account', accountId, '--parcel', parcelId, '--json');
      expect(erased.code).toBe(0);
      expect(erased.json).toEqual({ object: 'parcel_erasure', parcel_id: parcelId, events_erased: 3 });
      for (const id of [test, live]) {
        const body = await bodyOf(id);
        expect(body.data.parcel).toMatchObject({ recipient_name: '[erased]', description: '[erased]' });
      }
      // Every other field as it was, the sequence included.
      expect(await bodyOf(test)).toEqual({
        ...before,
        data: { parcel: { ...before.data.parcel, recipient_name: '[erased]', description: '[erased]' } },
      });
      expect((await bodyOf(settled)).data.parcel).toEqual({ id: parcelId, parcel_number: 'PCL-1' });
      expect((await bodyOf(untouched)).data.parcel).toMatchObject(personal);

      const again = await cli('parcels', 'erase', '--account', accountId, '--parcel', parcelId);
      expect(again.code).toBe(0);
      expect(again.stdout).toBe(`erased parcel ${parcelId}: 3 events\n`);

      const missing = await cli('parcels', 'erase', '--account', accountId, '--parcel', 'no-such-parcel');
      expect(missing.code).not.toBe(0);
      expect(missing.stderr).toBe(`error: No events of parcel no-such-parcel for this account.\n`);
    },
    CLI_TEST_TIMEOUT_MS,
  );
});
