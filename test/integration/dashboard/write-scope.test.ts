import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as keysTable from '../../../src/db/api-keys';
import * as deliveriesTable from '../../../src/db/deliveries';
import { insertTestEvent } from '../../../src/db/events';
import { newId } from '../../../src/core/ids';
import { revokeApiKey, revokeApiKeyAsOperator } from '../../../src/domain/api-keys';
import { publishEvent } from '../../../src/domain/events';
import { apiFixture, bearer, type ApiFixture } from '../../helpers/api';
import { createEndpoint, parcel } from '../../helpers/delivery';
import { createAccount, createApiKey } from '../../helpers/fixtures';
import { pageSession, snapshotOf } from '../../helpers/page-session';
import { CLI_ACTOR } from '../../../src/domain/audit-log';

/**
 * Every write a merchant reaches (the developers page and the API) is scoped to the account and the mode of the
 * address or the key: aimed at a row of the other mode or of another account, it answers 404 as for an unknown id
 * and the database is as it was. The statements themselves hold the scope too, so a caller that skipped the
 * domain's lookup would still change nothing.
 */
describe('writes scoped by account and mode', () => {
  let f: ApiFixture;
  beforeAll(async () => {
    f = await apiFixture();
  });
  afterAll(async () => {
    await f?.close();
  });

  type Rows = { endpoint: string; key: string; apiKey: string; event: string };
  type Holdings = { accountId: string; test: Rows; live: Rows };

  /**
   * An active account with, per mode, an endpoint, a key and an event whose delivery to the endpoint failed: a
   * resend or a recovery that leaked across the scope would add a delivery.
   */
  async function account(): Promise<Holdings> {
    const accountId = await createAccount(f.pool, { status: 'active' });
    const rows = async (livemode: boolean): Promise<Rows> => {
      const endpoint = await createEndpoint(f.pool, {
        accountId,
        url: `https://93.184.215.14/${livemode ? 'live' : 'test'}`,
        livemode,
      });
      const key = await createApiKey(f.pool, { accountId, mode: livemode ? 'live' : 'test' });
      const published = await publishEvent(
        { pool: f.pool },
        { accountId, livemode, type: 'parcel.delivered', data: { parcel: parcel() } },
      );
      await f.pool.query(`UPDATE deliveries SET status = 'failed' WHERE event_id = $1`, [published.event.id]);
      return { endpoint: endpoint.id, key: key.id, apiKey: key.key, event: published.event.id };
    };
    return { accountId, test: await rows(false), live: await rows(true) };
  }

  const other = (mode: 'test' | 'live') => (mode === 'test' ? 'live' : 'test');

  /** The page's writes of one mode, aimed at someone else's rows (`theirs`), with the page's own rows (`own`) where a form names a second one. */
  function pageWrites(mode: 'test' | 'live', theirs: Rows, own: Rows): Array<[string, Record<string, string>]> {
    const base = `/dashboard/${mode}`;
    const ep = `${base}/endpoints/${theirs.endpoint}`;
    return [
      [`${base}/keys/${theirs.key}/revoke`, { confirm: 'yes' }],
      [`${ep}/update`, { url: 'https://93.184.215.14/changed' }],
      [`${ep}/disable`, { confirm: 'yes' }],
      [`${ep}/enable`, {}],
      [`${ep}/pause`, {}],
      [`${ep}/resume`, {}],
      [`${ep}/rotate`, { confirm: 'yes' }],
      [`${ep}/test`, { type: 'parcel.delivered' }],
      [`${ep}/recover`, { since: '2026-01-01T00:00' }],
      [`${ep}/delete`, { confirm: 'yes' }],
      [`${base}/events/${theirs.event}/resend`, {}],
      [`${base}/events/${own.event}/resend`, { endpoint_id: theirs.endpoint }],
      [`${base}/event-types/test`, { endpoint_id: theirs.endpoint, type: 'parcel.delivered' }],
    ];
  }

  it('the page: each write aimed at the other mode or another account is a 404 and changes nothing', async () => {
    const mine = await account();
    const stranger = await account();
    const rounds = (['test', 'live'] as const).flatMap((mode) =>
      [mine[other(mode)], stranger[mode], stranger[other(mode)]].map((theirs) => ({ mode, theirs })),
    );
    // A session per round, opened first: the page's budget of changes counts refused ids too.
    const sessions = await Promise.all(rounds.map(() => pageSession(f.app, f.pool, mine.accountId)));
    const before = await snapshotOf(f.pool, [mine.accountId, stranger.accountId]);
    for (const [index, { mode, theirs }] of rounds.entries()) {
      for (const [url, fields] of pageWrites(mode, theirs, mine[mode])) {
        const res = await sessions[index]!.send('POST', url, fields);
        expect(res.statusCode, `${url} ${JSON.stringify(fields)}`).toBe(404);
      }
    }
    expect(await snapshotOf(f.pool, [mine.accountId, stranger.accountId])).toEqual(before);
    // The same forms on the page's own rows do change them: the 404s were the scope's.
    const session = await pageSession(f.app, f.pool, mine.accountId);
    const revoked = await session.send('POST', `/dashboard/test/keys/${mine.test.key}/revoke`, { confirm: 'yes' });
    expect(revoked.statusCode).toBe(303);
    const resent = await session.send('POST', `/dashboard/test/events/${mine.test.event}/resend`, {});
    expect(resent.statusCode).toBe(200);
    const keys = await f.pool.query('SELECT id FROM api_keys WHERE revoked_at IS NOT NULL AND account_id = ANY($1)', [
      [mine.accountId, stranger.accountId],
    ]);
    expect(keys.rows).toEqual([{ id: mine.test.key }]);
  });

  it('the API: each write aimed at the other mode or another account is a 404 and changes nothing', async () => {
    const mine = await account();
    const stranger = await account();
    const before = await snapshotOf(f.pool, [mine.accountId, stranger.accountId]);
    for (const mode of ['test', 'live'] as const) {
      const headers = bearer(mine[mode].apiKey);
      for (const theirs of [mine[other(mode)], stranger[mode], stranger[other(mode)]]) {
        const writes: Array<['PATCH' | 'POST' | 'DELETE', string, object | undefined]> = [
          ['PATCH', `/v1/webhooks/${theirs.endpoint}`, { description: 'changed', disabled: true }],
          ['POST', `/v1/webhooks/${theirs.endpoint}/secret/rotate`, {}],
          ['POST', `/v1/webhooks/${theirs.endpoint}/pause`, undefined],
          ['POST', `/v1/webhooks/${theirs.endpoint}/resume`, undefined],
          ['POST', `/v1/webhooks/${theirs.endpoint}/test`, { type: 'parcel.delivered' }],
          ['POST', `/v1/webhooks/${theirs.endpoint}/recover`, { since: 1_700_000_000 }],
          ['DELETE', `/v1/webhooks/${theirs.endpoint}`, undefined],
          ['POST', `/v1/events/${theirs.event}/resend`, {}],
          ['POST', `/v1/events/${mine[mode].event}/resend`, { endpoint_id: theirs.endpoint }],
        ];
        for (const [method, url, payload] of writes) {
          const res = await f.app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload }) });
          expect(res.statusCode, `${mode} key: ${method} ${url} ${JSON.stringify(payload)}`).toBe(404);
          expect(res.json().error.code).toBe('resource_missing');
        }
      }
    }
    // The keys' last use moves with every request; nothing else does.
    const withoutLastUse = (snapshot: Record<string, unknown[]>) => ({
      ...snapshot,
      keys: snapshot.keys?.map((row) => ({ ...(row as Record<string, unknown>), last_used_at: null })),
    });
    expect(withoutLastUse(await snapshotOf(f.pool, [mine.accountId, stranger.accountId]))).toEqual(
      withoutLastUse(before),
    );
  });

  it('the statements: a write given another account or mode than its row changes nothing', async () => {
    const mine = await account();
    const stranger = await account();
    const scope = { accountId: mine.accountId, livemode: false };
    const before = await snapshotOf(f.pool, [mine.accountId, stranger.accountId]);

    expect(
      await keysTable.revokeApiKey(f.pool, { accountId: mine.accountId, livemode: true }, mine.test.key),
    ).toBeUndefined();
    expect(await keysTable.revokeApiKey(f.pool, scope, stranger.test.key)).toBeUndefined();
    await expect(
      revokeApiKey(f.pool, { accountId: mine.accountId, livemode: true }, mine.test.key, CLI_ACTOR),
    ).rejects.toMatchObject({ code: 'resource_missing' });
    // An event of the scope to endpoints outside it, and an event outside it: no delivery.
    await deliveriesTable.insertDeliveries(f.pool, scope, {
      eventId: mine.test.event,
      endpointIds: [mine.live.endpoint, stranger.test.endpoint],
      trigger: 'resend',
    });
    await deliveriesTable.insertDeliveries(f.pool, scope, {
      eventId: stranger.test.event,
      endpointIds: [stranger.test.endpoint],
      trigger: 'resend',
    });
    await deliveriesTable.insertDeliveries(f.pool, scope, {
      eventId: mine.live.event,
      endpointIds: [mine.live.endpoint],
      trigger: 'resend',
    });
    expect(
      await deliveriesTable.liveEndpointsOfEvent(
        f.pool,
        { accountId: mine.accountId, livemode: true },
        mine.test.event,
      ),
    ).toEqual([]);
    for (const endpointId of [mine.live.endpoint, stranger.test.endpoint]) {
      const recovery = {
        recoveryId: newId('recovery'),
        endpointId,
        ...scope,
        since: 0,
        until: 2_000_000_000,
        intervalMs: 1000,
      };
      expect(await deliveriesTable.insertRecoveryDeliveries(f.pool, recovery)).toBe(0);
      const test = {
        id: newId('event'),
        accountId: mine.accountId,
        livemode: false,
        type: 'parcel.delivered',
        created: 1_700_000_000,
        body: '{}',
      };
      expect(await insertTestEvent(f.pool, test, endpointId)).toBe(false);
    }
    expect(await snapshotOf(f.pool, [mine.accountId, stranger.accountId])).toEqual(before);

    // Within the scope the same statements write.
    const recovery = {
      recoveryId: newId('recovery'),
      endpointId: mine.test.endpoint,
      ...scope,
      since: 0,
      until: 2_000_000_000,
      intervalMs: 1000,
    };
    expect(await deliveriesTable.insertRecoveryDeliveries(f.pool, recovery)).toBe(1);
    await deliveriesTable.insertDeliveries(f.pool, scope, {
      eventId: mine.test.event,
      endpointIds: [mine.test.endpoint],
      trigger: 'resend',
    });
    const made = await f.pool.query('SELECT trigger FROM deliveries WHERE event_id = $1 ORDER BY trigger', [
      mine.test.event,
    ]);
    expect(made.rows.map((row) => row.trigger)).toEqual(['automatic', 'recover', 'resend']);
    expect(
      await insertTestEvent(
        f.pool,
        { id: newId('event'), ...scope, type: 'parcel.delivered', created: 1_700_000_000, body: '{}' },
        mine.test.endpoint,
      ),
    ).toBe(true);
    expect((await keysTable.revokeApiKey(f.pool, scope, mine.test.key))?.revoked_at).toBeInstanceOf(Date);
    // The operator's revoke (CLI `keys revoke KEY_ID`) takes any key by its id.
    expect((await revokeApiKeyAsOperator(f.pool, stranger.live.key, CLI_ACTOR)).revoked).toBe(true);
  });
});
