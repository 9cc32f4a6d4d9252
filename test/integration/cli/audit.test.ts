import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool, type Pool } from '../../../src/db/pool';
import { testDatabaseUrl } from '../../helpers/database';
import { createAccount } from '../../helpers/fixtures';
import { CLI_TEST_TIMEOUT_MS, runCli } from '../../helpers/cli';

const cli = (...args: string[]) => runCli(args, { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false' });

/** What an operator changes with the CLI is in the audit log as the CLI's (actor cli, id null). */
describe('CLI: audit log', () => {
  let pool: Pool;
  beforeAll(() => {
    pool = createPool(testDatabaseUrl());
  });
  afterAll(async () => {
    await pool?.end();
  });

  it(
    'records keys and endpoints the CLI changes as actor cli, and lists them with audit list',
    async () => {
      const account = await createAccount(pool, { status: 'active' });
      const scope = ['--account', account, '--mode', 'test'];
      const key = await cli('keys', 'create', ...scope, '--scopes', 'network:read', '--json');
      expect(key.code, key.stderr).toBe(0);
      expect((await cli('keys', 'revoke', key.json.id, '--json')).code).toBe(0);
      const endpoint = await cli('webhooks', 'create', ...scope, '--url', 'https://93.184.215.14/cli', '--json');
      expect(endpoint.code, endpoint.stderr).toBe(0);
      const updated = await cli('webhooks', 'update', endpoint.json.id, ...scope, '--rate-limit', '5', '--json');
      expect(updated.code, updated.stderr).toBe(0);

      const listed = await cli('audit', 'list', ...scope, '--json');
      expect(listed.code, listed.stderr).toBe(0);
      const cliActor = { type: 'cli', id: null };
      expect(listed.json).toMatchObject({ object: 'list', has_more: false });
      expect(listed.json.data).toEqual([
        expect.objectContaining({
          action: 'endpoint.updated',
          actor: cliActor,
          target: { type: 'webhook_endpoint', id: endpoint.json.id },
          changes: ['rate_limit'],
        }),
        expect.objectContaining({ action: 'endpoint.created', actor: cliActor }),
        expect.objectContaining({
          action: 'api_key.revoked',
          actor: cliActor,
          target: { type: 'api_key', id: key.json.id },
        }),
        expect.objectContaining({
          action: 'api_key.created',
          actor: cliActor,
          target: { type: 'api_key', id: key.json.id },
        }),
      ]);
      // The stored rows say the same, and the live mode's log is another one.
      const { rows } = await pool.query('SELECT DISTINCT actor_type, actor_id FROM audit_log WHERE account_id = $1', [
        account,
      ]);
      expect(rows).toEqual([{ actor_type: 'cli', actor_id: null }]);
      const live = await cli('audit', 'list', '--account', account, '--mode', 'live', '--json');
      expect(live.json.data).toEqual([]);

      const filtered = await cli('audit', 'list', ...scope, '--action', 'api_key.created');
      expect(filtered.code).toBe(0);
      expect(filtered.stdout).toContain('api_key.created');
      expect(filtered.stdout).not.toContain('endpoint.');
      const bad = await cli('audit', 'list', ...scope, '--action', 'nope');
      expect(bad.code).not.toBe(0);
      expect(bad.stderr).toContain('Unknown action "nope"');
    },
    CLI_TEST_TIMEOUT_MS,
  );
});
