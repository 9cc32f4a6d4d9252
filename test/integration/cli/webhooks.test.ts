import { execFile } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { testDatabaseUrl } from '../../helpers/database';

const BIN = path.join(__dirname, '..', '..', '..', 'cli', 'bin.js');
/** Each CLI run compiles the TypeScript sources through tsx: several seconds on a loaded 2-core box. */
const CLI_TEST_TIMEOUT_MS = 240_000;
// A public address literal: passes the SSRF guard without any DNS.
const PUBLIC_URL = 'https://93.184.215.14/hook';

interface Run {
  code: number;
  json: any;
}

function cli(...args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args, '--json'],
      { env: { ...process.env, DATABASE_URL: testDatabaseUrl(), LOG_LEVEL: 'silent' }, timeout: 30_000 },
      (error, stdout) => {
        let json: unknown;
        try {
          json = JSON.parse(stdout);
        } catch {
          json = undefined;
        }
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, json });
      },
    );
  });
}

describe('CLI: webhooks create|update (--json)', () => {
  it('registers an endpoint with --ordering, changes it, and refuses a bad value with the API code', async () => {
    const account = (await cli('accounts', 'create', '--name', 'Ordered Duka')).json.id as string;
    const scope = ['--account', account, '--mode', 'test'];
    const created = await cli('webhooks', 'create', PUBLIC_URL, ...scope, '--ordering', 'parcel');
    expect(created.code).toBe(0);
    expect(created.json).toMatchObject({ object: 'webhook_endpoint', url: PUBLIC_URL, ordering: 'parcel', livemode: false });
    expect(created.json.secret).toMatch(/^whsec_/);

    const updated = await cli('webhooks', 'update', created.json.id, ...scope, '--ordering', 'none');
    expect(updated.code).toBe(0);
    expect(updated.json).toMatchObject({ id: created.json.id, ordering: 'none' });

    const refused = await cli('webhooks', 'update', created.json.id, ...scope, '--ordering', 'sorted');
    expect(refused.code).toBe(1);
    expect(refused.json.error.code).toBe('parameter_invalid');
    const plain = await cli('webhooks', 'create', PUBLIC_URL, ...scope);
    expect(plain.json.ordering).toBe('none');
  }, CLI_TEST_TIMEOUT_MS);
});
