import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiFixture, bearer, type ApiFixture } from '../../helpers/api';
import { waitFor } from '../../helpers/wait';
import { CLI_TEST_TIMEOUT_MS, runCli } from '../../helpers/cli';

const cli = (...args: string[]) => runCli(args, {}, 30_000);

describe('CLI: accounts and keys (--json)', () => {
  let f: ApiFixture;
  beforeAll(async () => {
    f = await apiFixture();
  });
  afterAll(async () => {
    await f?.close();
  });

  it(
    'runs the key lifecycle: create account, test key works at once, live key after approval, rotate, suspend',
    async () => {
      const created = await cli('accounts', 'create', '--name', 'Duka Letu', '--email', 'ops@duka.example', '--json');
      expect(created.code).toBe(0);
      expect(created.json).toMatchObject({
        object: 'account',
        name: 'Duka Letu',
        email: 'ops@duka.example',
        status: 'pending',
      });
      const account = created.json.id as string;
      expect(account).toMatch(/^acct_/);

      const test = await cli(
        'keys',
        'create',
        '--account',
        account,
        '--mode',
        'test',
        '--scopes',
        'network:read',
        '--description',
        'checkout',
        '--json',
      );
      expect(test.code).toBe(0);
      expect(test.json).toMatchObject({
        object: 'api_key',
        mode: 'test',
        livemode: false,
        scopes: ['network:read'],
        revoked: false,
        last_used_at: null,
      });
      expect(test.json.key).toMatch(/^svc_test_[A-Za-z0-9]{32}$/);
      expect(test.json.last4).toBe(test.json.key.slice(-4));
      expect((await f.app.inject({ url: '/v1/towns', headers: bearer(test.json.key) })).statusCode).toBe(200);

      const listed = await waitFor(
        async () => {
          const run = await cli('keys', 'list', '--account', account, '--json');
          return run.json?.data?.[0]?.last_used_at ? run : undefined;
        },
        { timeoutMs: 20_000, intervalMs: 250, what: 'last_used_at in keys list' },
      );
      expect(listed.json.data).toHaveLength(1);
      expect(listed.json.data[0]).toMatchObject({
        id: test.json.id,
        last4: test.json.last4,
        scopes: ['network:read'],
        mode: 'test',
        expires_at: null,
        revoked: false,
      });
      expect(listed.stdout).not.toContain(test.json.key);
      expect(listed.json.data[0]).not.toHaveProperty('key');

      const live = await cli(
        'keys',
        'create',
        '--account',
        account,
        '--mode',
        'live',
        '--scopes',
        'all',
        '--expires',
        '2099-01-01T00:00:00Z',
        '--json',
      );
      expect(live.json).toMatchObject({ mode: 'live', livemode: true, expires_at: '2099-01-01T00:00:00.000Z' });
      expect(live.json.scopes).toHaveLength(6);
      const liveRes = () => f.app.inject({ url: '/v1/towns', headers: bearer(live.json.key) });
      expect((await liveRes()).json().error.code).toBe('client_not_active');
      expect((await cli('accounts', 'approve', account, '--json')).json).toMatchObject({
        id: account,
        status: 'active',
      });
      expect((await liveRes()).json()).toMatchObject({ object: 'list', livemode: true });

      const revoked = await cli('keys', 'revoke', test.json.id, '--json');
      expect(revoked.json).toMatchObject({ id: test.json.id, revoked: true });
      expect((await f.app.inject({ url: '/v1/towns', headers: bearer(test.json.key) })).json().error.code).toBe(
        'revoked_api_key',
      );

      expect((await cli('accounts', 'suspend', account, '--json')).json).toMatchObject({ status: 'suspended' });
      expect((await liveRes()).json().error.code).toBe('client_suspended');

      const accounts = await cli('accounts', 'list', '--json');
      expect(accounts.json.object).toBe('list');
      expect(accounts.json.data.map((a: { id: string }) => a.id)).toContain(account);
    },
    CLI_TEST_TIMEOUT_MS,
  );

  it(
    'a key created with a past expiry is refused as expired',
    async () => {
      const account = (await cli('accounts', 'create', '--name', 'Old', '--status', 'active', '--json')).json.id;
      const key = (
        await cli(
          'keys',
          'create',
          '--account',
          account,
          '--mode',
          'test',
          '--scopes',
          'all',
          '--expires',
          '2020-01-01',
          '--json',
        )
      ).json;
      expect(key.expires_at).toBe('2020-01-01T00:00:00.000Z');
      expect((await f.app.inject({ url: '/v1/towns', headers: bearer(key.key) })).json().error.code).toBe(
        'expired_api_key',
      );
    },
    CLI_TEST_TIMEOUT_MS,
  );

  it(
    'bad input is one JSON error document and a non-zero exit',
    async () => {
      const account = (await cli('accounts', 'create', '--name', 'Bad input', '--json')).json.id;
      // Parsing itself is covered by test/unit; here one case per kind of failure, since each run costs seconds.
      const cases: Array<[string[], string]> = [
        [['keys', 'create', '--account', account, '--mode', 'prod', '--scopes', 'all'], 'parameter_invalid'],
        [
          ['keys', 'create', '--account', account, '--mode', 'test', '--scopes', 'network:read,root'],
          'parameter_invalid',
        ],
        [
          ['keys', 'create', '--account', account, '--mode', 'test', '--scopes', 'all', '--expires', '2026-02-30'],
          'parameter_invalid',
        ],
        [
          ['keys', 'create', '--account', "acct_x'; DROP TABLE accounts; --", '--mode', 'test', '--scopes', 'all'],
          'resource_missing',
        ],
        [['keys', 'revoke', 'key_missing'], 'resource_missing'],
        [['accounts', 'approve', 'acct_missing'], 'resource_missing'],
        [['accounts', 'create', '--name', 'X', '--status', 'gold'], 'parameter_invalid'],
      ];
      for (const [args, code] of cases) {
        const run = await cli(...args, '--json');
        expect({ args, exit: run.code !== 0, code: run.json?.error?.code }).toEqual({ args, exit: true, code });
      }
      const text = await cli('keys', 'create', '--account', account, '--mode', 'prod', '--scopes', 'all');
      expect(text.code).not.toBe(0);
      expect(text.stderr).toMatch(/Invalid mode "prod"/);
    },
    CLI_TEST_TIMEOUT_MS,
  );

  it(
    'has help for every command',
    async () => {
      for (const args of [['accounts'], ['keys'], ['keys', 'create']]) {
        const run = await cli(...args, '--help');
        expect(run.code).toBe(0);
        expect(run.stdout).toMatch(/Usage: parcel-webhooks/);
      }
      expect((await cli('keys', 'create', '--help')).stdout).toContain('webhooks:manage');
    },
    CLI_TEST_TIMEOUT_MS,
  );
});
