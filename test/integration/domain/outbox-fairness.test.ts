import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimUndispatched } from '../../../src/db/outbox';
import { createPool, type Pool } from '../../../src/db/pool';
import { publishEvent } from '../../../src/domain/events';
import { createEndpoint, parcel } from '../../helpers/delivery';
import { createAccount } from '../../helpers/fixtures';
import { testDatabaseUrl } from '../../helpers/database';

/**
 * The outbox hands off in turns across accounts: a quiet account's events published after a noisy account's
 * backlog are in the first claim, one per turn, not behind the backlog; and an account whose early posts hold
 * its share of a worker is claimed no further than the room it has left, the rest of its backlog left waiting.
 */
describe('outbox hand-off across accounts', () => {
  let pool: Pool;
  beforeAll(() => {
    pool = createPool(testDatabaseUrl(), 2);
  });
  afterAll(async () => {
    await pool?.end();
  });

  async function publishMany(accountId: string, count: number): Promise<string[]> {
    await createEndpoint(pool, { accountId, url: 'https://merchant.example/hooks' });
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      const published = await publishEvent(
        { pool },
        { accountId, livemode: false, type: 'parcel.delivered', data: { parcel: parcel() } },
      );
      ids.push(published.event.id);
    }
    return ids;
  }

  it('interleaves a quiet account with a noisy backlog, each oldest first', async () => {
    const noisy = await createAccount(pool);
    const quiet = await createAccount(pool);
    const noisyIds = await publishMany(noisy, 50);
    const quietIds = await publishMany(quiet, 5);
    const ids = [...noisyIds, ...quietIds];

    const first = await claimUndispatched(pool, { ids, limit: 10, leaseMs: 30_000 });
    // Turn by turn: each account's oldest waiting event, then each one's next (RETURNING keeps no order).
    const expected = Array.from({ length: 5 }).flatMap((_, turn) => [noisyIds[turn], quietIds[turn]]);
    expect(first.map((row) => row.id).sort()).toEqual([...expected].sort());
    expect(first.filter((row) => row.account_id === quiet).map((row) => row.id)).toEqual(quietIds);
    expect(first.filter((row) => row.account_id === noisy).map((row) => row.id)).toEqual(noisyIds.slice(0, 5));

    // The next claim goes on with the noisy backlog, oldest first, the leased rows left alone.
    const next = await claimUndispatched(pool, { ids, limit: 10, leaseMs: 30_000 });
    expect(next.map((row) => row.id).sort()).toEqual(noisyIds.slice(5, 15).sort());
  });

  it('claims of an account holding places no more than its room, and of one at its share none', async () => {
    const noisy = await createAccount(pool);
    const quiet = await createAccount(pool);
    const other = await createAccount(pool);
    const noisyIds = await publishMany(noisy, 20);
    const quietIds = await publishMany(quiet, 3);
    const otherIds = await publishMany(other, 3);
    const ids = [...noisyIds, ...quietIds, ...otherIds];

    const room = { accounts: [`${noisy}:false`, `${other}:false`], room: [2, 0] };
    const claimed = await claimUndispatched(pool, { ids, limit: 50, leaseMs: 30_000, room });
    expect(claimed.filter((row) => row.account_id === noisy).map((row) => row.id)).toEqual(noisyIds.slice(0, 2));
    expect(claimed.filter((row) => row.account_id === quiet).map((row) => row.id)).toEqual(quietIds);
    expect(claimed.filter((row) => row.account_id === other)).toEqual([]);

    // Once the places are back, the backlog goes on where it stopped, oldest first.
    const later = await claimUndispatched(pool, { ids, limit: 50, leaseMs: 30_000 });
    expect(
      later
        .filter((row) => row.account_id === noisy)
        .map((row) => row.id)
        .sort(),
    ).toEqual(noisyIds.slice(2).sort());
    expect(
      later
        .filter((row) => row.account_id === other)
        .map((row) => row.id)
        .sort(),
    ).toEqual([...otherIds].sort());
  });

  it('sweeps (no ids given) in the same turns and rooms, each account oldest first', async () => {
    // What earlier tests left waiting is leased away first, so the sweep sees only this test's events.
    await claimUndispatched(pool, { limit: 10_000, leaseMs: 600_000 });
    const noisy = await createAccount(pool);
    const quiet = await createAccount(pool);
    const held = await createAccount(pool);
    const noisyIds = await publishMany(noisy, 30);
    const quietIds = await publishMany(quiet, 3);
    const heldIds = await publishMany(held, 10);

    const room = { accounts: [`${held}:false`], room: [2] };
    const first = await claimUndispatched(pool, { limit: 9, leaseMs: 30_000, room });
    // Turn 1: one of each; turn 2: one of each; turn 3: the noisy and the quiet one (the held one is at its room).
    const expected = [
      ...noisyIds.slice(0, 3),
      ...quietIds,
      ...heldIds.slice(0, 2),
      // the claim's last place goes to the oldest of turn 4, the noisy account's
      noisyIds[3],
    ];
    expect(first.map((row) => row.id).sort()).toEqual([...expected].sort());

    // The next sweep takes the noisy backlog on where it stopped and the held account's next two.
    const next = await claimUndispatched(pool, { limit: 6, leaseMs: 30_000, room });
    expect(next.map((row) => row.id).sort()).toEqual([...noisyIds.slice(4, 8), ...heldIds.slice(2, 4)].sort());
  });
});
