import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool, type Pool } from '../../../src/db/pool';
import { testDatabaseUrl } from '../../helpers/database';
import { createAccount } from '../../helpers/fixtures';
import { CLI_TEST_TIMEOUT_MS, runCli } from '../../helpers/cli';

/** A public IP literal passes the SSRF guard without any DNS. */
const cli = (...args: string[]) => runCli(args, { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false' });

describe('CLI: webhooks create and update', () => {
  let pool: Pool;
  beforeAll(() => {
    pool = createPool(testDatabaseUrl());
  });
  afterAll(async () => {
    await pool?.end();
  });

  it(
    'registers an endpoint with --rate-limit, changes it, removes it with none, and refuses a bad value',
    async () => {
      const account = await createAccount(pool, { status: 'active' });
      const scope = ['--account', account, '--mode', 'test'];
      const created = await cli(
        'webhooks',
        'create',
        ...scope,
        '--url',
        'https://93.184.215.14/cli',
        '--rate-limit',
        '40',
        '--json',
      );
      expect(created.code, created.stdout).toBe(0);
      expect(created.json).toMatchObject({
        object: 'webhook_endpoint',
        url: 'https://93.184.215.14/cli',
        rate_limit: 40,
        livemode: false,
      });
      expect(created.json.secret).toMatch(/^whsec_/);
      const id = created.json.id as string;

      const updated = await cli('webhooks', 'update', id, ...scope, '--rate-limit', '5', '--json');
      expect(updated.code, updated.stdout).toBe(0);
      expect(updated.json).toMatchObject({ id, rate_limit: 5 });
      expect(updated.json).not.toHaveProperty('secret');

      const refused = await cli('webhooks', 'update', id, ...scope, '--rate-limit', '1001', '--json');
      expect(refused.code).not.toBe(0);
      expect(refused.json.error).toMatchObject({ code: 'parameter_invalid' });
      const { rows } = await pool.query('SELECT rate_limit FROM webhook_endpoints WHERE id = $1', [id]);
      expect(rows[0].rate_limit).toBe(5);

      const removed = await cli('webhooks', 'update', id, ...scope, '--rate-limit', 'none');
      expect(removed.code, removed.stdout).toBe(0);
      expect(removed.stdout).toContain('no rate limit');
      expect(
        (await pool.query('SELECT rate_limit FROM webhook_endpoints WHERE id = $1', [id])).rows[0].rate_limit,
      ).toBeNull();
    },
    CLI_TEST_TIMEOUT_MS,
  );

  it(
    'registers an endpoint with --ordering, changes it, and refuses a bad value with the API code',
    async () => {
      const account = await createAccount(pool, { status: 'active' });
      const scope = ['--account', account, '--mode', 'test'];
      const url = 'https://93.184.215.14/ordered';
      const created = await cli('webhooks', 'create', url, ...scope, '--ordering', 'parcel', '--json');
      expect(created.code, created.stdout).toBe(0);
      expect(created.json).toMatchObject({ object: 'webhook_endpoint', url, ordering: 'parcel', livemode: false });
      expect(created.json.secret).toMatch(/^whsec_/);

      const updated = await cli('webhooks', 'update', created.json.id, ...scope, '--ordering', 'none', '--json');
      expect(updated.code, updated.stdout).toBe(0);
      expect(updated.json).toMatchObject({ id: created.json.id, ordering: 'none' });

      const refused = await cli('webhooks', 'update', created.json.id, ...scope, '--ordering', 'sorted', '--json');
      expect(refused.code).toBe(1);
      expect(refused.json.error.code).toBe('parameter_invalid');
      const plain = await cli('webhooks', 'create', url, ...scope, '--json');
      expect(plain.json.ordering).toBe('none');
    },
    CLI_TEST_TIMEOUT_MS,
  );

  it(
    'sets headers with repeated --header, removes one with "Name:", and refuses a reserved name with the API code',
    async () => {
      const account = await createAccount(pool, { status: 'active' });
      const scope = ['--account', account, '--mode', 'test'];
      const created = await cli(
        'webhooks',
        'create',
        'https://93.184.215.14/headers',
        ...scope,
        '--header',
        'X-Route: eu-1',
        '--header',
        'X-Api-Key: k-1',
        '--json',
      );
      expect(created.code, created.stdout).toBe(0);
      expect(created.json.headers).toEqual({ 'X-Route': 'eu-1', 'X-Api-Key': '********' });
      const id = created.json.id as string;
      const updated = await cli(
        'webhooks',
        'update',
        id,
        ...scope,
        '--header',
        'X-Route:',
        '--header',
        'X-Team: parcels',
        '--json',
      );
      expect(updated.code, updated.stdout).toBe(0);
      expect(updated.json.headers).toEqual({ 'X-Api-Key': '********', 'X-Team': 'parcels' });
      const refused = await cli('webhooks', 'update', id, ...scope, '--header', 'Host: evil.example', '--json');
      expect(refused.code).not.toBe(0);
      expect(refused.json.error).toMatchObject({ code: 'header_not_allowed' });
      for (const name of ['Keep-Alive', 'TE', 'Proxy-Authorization']) {
        const hopByHop = await cli('webhooks', 'update', id, ...scope, '--header', `${name}: v`, '--json');
        expect(hopByHop.code).not.toBe(0);
        expect(hopByHop.json.error).toMatchObject({ code: 'header_not_allowed' });
      }
    },
    CLI_TEST_TIMEOUT_MS,
  );

  it(
    '--url to another origin drops the hidden headers unless --header sets them again; a path change keeps them',
    async () => {
      const account = await createAccount(pool, { status: 'active' });
      const scope = ['--account', account, '--mode', 'test'];
      const created = await cli(
        'webhooks',
        'create',
        'https://93.184.215.14/origin',
        ...scope,
        '--header',
        'X-Route: eu-1',
        '--header',
        'Authorization: Bearer gw-1',
        '--header',
        'X-Password: p-1',
        '--json',
      );
      expect(created.code, created.stdout).toBe(0);
      const id = created.json.id as string;
      const hidden = { 'X-Route': 'eu-1', Authorization: '********', 'X-Password': '********' };
      const samePath = await cli('webhooks', 'update', id, ...scope, '--url', 'https://93.184.215.14/other', '--json');
      expect(samePath.code, samePath.stdout).toBe(0);
      expect(samePath.json.headers).toEqual(hidden);
      const moved = await cli(
        'webhooks',
        'update',
        id,
        ...scope,
        '--url',
        'https://93.184.215.15/other',
        '--header',
        'Authorization: Bearer gw-2',
        '--json',
      );
      expect(moved.code, moved.stdout).toBe(0);
      expect(moved.json.headers).toEqual({ 'X-Route': 'eu-1', Authorization: '********' });
      const port = await cli('webhooks', 'update', id, ...scope, '--url', 'https://93.184.215.15:8443/other', '--json');
      expect(port.code, port.stdout).toBe(0);
      expect(port.json.headers).toEqual({ 'X-Route': 'eu-1' });
    },
    CLI_TEST_TIMEOUT_MS,
  );

  it(
    'pause and resume an endpoint, printing the record; a 410-disabled one shows why',
    async () => {
      const account = await createAccount(pool, { status: 'active' });
      const scope = ['--account', account, '--mode', 'test'];
      const created = await cli('webhooks', 'create', 'https://93.184.215.14/paused', ...scope, '--json');
      expect(created.code, created.stdout).toBe(0);
      const id = created.json.id as string;
      expect(created.json).toMatchObject({ status: 'enabled', paused_at: null, disabled_reason: null });

      const paused = await cli('webhooks', 'pause', id, ...scope, '--json');
      expect(paused.code, paused.stdout + paused.stderr).toBe(0);
      expect(paused.json).toMatchObject({ id, status: 'paused', paused_at: expect.any(Number) });
      const { rows } = await pool.query('SELECT paused_at IS NOT NULL AS paused FROM webhook_endpoints WHERE id = $1', [
        id,
      ]);
      expect(rows[0].paused).toBe(true);
      const human = await cli('webhooks', 'resume', id, ...scope);
      expect(human.code, human.stdout + human.stderr).toBe(0);
      expect(human.stdout).toContain(`${id}  enabled  `);
      const again = await cli('webhooks', 'pause', id, ...scope);
      expect(again.stdout).toMatch(new RegExp(`${id}  paused since \\d{4}-\\d\\d-\\d\\dT`));

      await pool.query(`UPDATE webhook_endpoints SET disabled_at = now(), disabled_reason = 'gone' WHERE id = $1`, [
        id,
      ]);
      const gone = await cli('webhooks', 'update', id, ...scope, '--description', 'gone');
      expect(gone.stdout).toContain(`${id}  disabled (gone)  `);

      const missing = await cli('webhooks', 'pause', 'we_nope', ...scope, '--json');
      expect(missing.code).not.toBe(0);
      expect(missing.json.error).toMatchObject({ code: 'resource_missing' });
    },
    CLI_TEST_TIMEOUT_MS,
  );
});
