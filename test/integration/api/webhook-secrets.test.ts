import type { LookupAddress } from 'node:dns';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Lookup } from '../../../src/infra/ssrf';
import { registerEndpoint } from '../../../src/domain/endpoints';
import { loadEndpointForDelivery } from '../../../src/attempt';
import { encryptionKeyId } from '../../../src/core/secrets';
import { testConfig } from '../../helpers/env';
import { createAccountWithKey } from '../../helpers/fixtures';
import { apiFixture, type ApiFixture } from '../../helpers/api';
import { CLI_ACTOR } from '../../../src/domain/audit-log';

const KEY_HEX = 'a1'.repeat(32);

describe('endpoint secrets encrypted at rest', () => {
  let api: ApiFixture;
  let merchant: Awaited<ReturnType<typeof createAccountWithKey>>;

  beforeAll(async () => {
    api = await apiFixture({ config: testConfig({ WEBHOOK_SECRET_ENCRYPTION_KEY: KEY_HEX }) });
    merchant = await createAccountWithKey(api.pool);
  });
  afterAll(async () => {
    await api?.close();
  });

  const storedSecrets = async (id: string) =>
    (await api.pool.query('SELECT secret, previous_secret FROM webhook_endpoints WHERE id = $1', [id])).rows[0] as {
      secret: string;
      previous_secret: string | null;
    };

  it('never writes the plain secret to the database, and the delivery engine can open it', async () => {
    const res = await api.app.inject({
      method: 'POST',
      url: '/v1/webhooks',
      headers: merchant.headers,
      payload: { url: 'https://127.0.0.1:8443/hook' },
    });
    expect(res.statusCode).toBe(200);
    const { id, secret } = res.json();
    const stored = await storedSecrets(id);
    expect(stored.secret.startsWith(`enc:v2:${encryptionKeyId(Buffer.from(KEY_HEX, 'hex'))}:`)).toBe(true);
    expect(stored.secret).not.toContain(secret);
    expect(stored.secret).not.toContain(secret.slice(6));

    const ring = api.config.webhook.secretEncryptionKeys;
    expect((await loadEndpointForDelivery(api.pool, id, ring))?.secrets).toEqual([secret]);
    await expect(loadEndpointForDelivery(api.pool, id)).rejects.toThrow(/WEBHOOK_SECRET_ENCRYPTION_KEYS is not set/);

    const rotated = await api.app.inject({
      method: 'POST',
      url: `/v1/webhooks/${id}/secret/rotate`,
      headers: merchant.headers,
    });
    const newSecret = rotated.json().secret;
    const after = await storedSecrets(id);
    expect(after.secret).toMatch(/^enc:v2:/);
    expect(after.previous_secret).toBe(stored.secret);
    expect(JSON.stringify(after)).not.toContain(newSecret.slice(6));
    expect((await loadEndpointForDelivery(api.pool, id, ring))?.secrets).toEqual([newSecret, secret]);
  });

  it('reports a suspended account to the delivery engine, and an unknown id as undefined', async () => {
    const res = await api.app.inject({
      method: 'POST',
      url: '/v1/webhooks',
      headers: merchant.headers,
      payload: { url: 'https://127.0.0.1:8443/other' },
    });
    const id = res.json().id;
    await api.pool.query("UPDATE accounts SET status = 'suspended' WHERE id = $1", [merchant.accountId]);
    try {
      const loaded = await loadEndpointForDelivery(api.pool, id, api.config.webhook.secretEncryptionKeys);
      expect(loaded).toMatchObject({
        id,
        accountId: merchant.accountId,
        accountSuspended: true,
        deleted: false,
        status: 'enabled',
      });
    } finally {
      await api.pool.query("UPDATE accounts SET status = 'active' WHERE id = $1", [merchant.accountId]);
    }
    expect(await loadEndpointForDelivery(api.pool, 'we_nothing')).toBeUndefined();
  });
});

describe('registerEndpoint with a resolver (no real DNS)', () => {
  let api: ApiFixture;
  let accountId: string;
  const lookup: Lookup = (hostname, _options, callback) => {
    const table: Record<string, string[]> = {
      'hooks.merchant.example': ['93.184.215.14'],
      'intranet.merchant.example': ['10.20.30.40', '93.184.215.14'],
    };
    const addresses = table[hostname];
    if (!addresses) callback(Object.assign(new Error('ENOTFOUND'), { code: 'ENOTFOUND' }), []);
    else
      callback(
        null,
        addresses.map((address): LookupAddress => ({ address, family: 4 })),
      );
  };

  beforeAll(async () => {
    api = await apiFixture({ config: testConfig({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false' }) });
    accountId = (await createAccountWithKey(api.pool)).accountId;
  });
  afterAll(async () => {
    await api?.close();
  });

  const count = async () =>
    Number(
      (await api.pool.query('SELECT count(*) AS n FROM webhook_endpoints WHERE account_id = $1', [accountId])).rows[0]
        .n,
    );
  const register = (url: string) =>
    registerEndpoint(
      { pool: api.pool, config: api.config, lookup },
      { accountId, livemode: false },
      { url },
      CLI_ACTOR,
    );

  it('registers a name that resolves to public addresses only', async () => {
    const endpoint = await register('https://hooks.merchant.example/in');
    expect(endpoint.url).toBe('https://hooks.merchant.example/in');
    expect(await count()).toBe(1);
  });

  it('refuses a name resolving to a private address, and one that does not resolve, creating nothing', async () => {
    await expect(register('https://intranet.merchant.example/in')).rejects.toMatchObject({
      code: 'url_not_allowed',
      extra: { param: 'url' },
    });
    await expect(register('https://nowhere.merchant.example/in')).rejects.toMatchObject({ code: 'invalid_url' });
    expect(await count()).toBe(1);
  });
});
