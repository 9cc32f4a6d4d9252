import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { SEARCH_ATTRIBUTE_SDK_TYPES } from '../../src/core/delivery-contract';
import { dropDatabase } from '../../src/db/migrate';
import { freePort } from '../../temporal-tools/ports';
import { freeMetricsPort, scrape, valueOf } from '../helpers/prometheus';
import { waitFor } from '../helpers/wait';
import { testDatabaseUrl } from '../helpers/database';

const root = path.join(__dirname, '..', '..');

function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * `npm start` as a user runs it (scripts/start.js, then `parcel-webhooks start`), with no TEMPORAL_ADDRESS:
 * it creates and migrates its database, starts the dev server with our search attributes, a worker and the API;
 * Ctrl-C (SIGINT to the process group) stops everything.
 */
describe('npm start', () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'pw-start-'));
  const databaseUrl = `${testDatabaseUrl()}_start`;
  let child: ChildProcess | undefined;

  afterAll(async () => {
    if (child?.pid && groupAlive(child.pid)) process.kill(-child.pid, 'SIGKILL');
    await dropDatabase(databaseUrl);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('starts the whole service on a missing database and stops cleanly on Ctrl-C', { timeout: 180_000 }, async () => {
    const [apiPort, devPort, uiPort, metricsPort] = [
      await freePort(),
      await freePort(),
      await freePort(),
      await freeMetricsPort(),
    ];
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      PORT: String(apiPort),
      TEMPORAL_DEV_PORT: String(devPort),
      TEMPORAL_UI_PORT: String(uiPort),
      TEMPORAL_CLI: inject('temporalCli'),
      DATABASE_URL: databaseUrl,
      PARCEL_DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      METRICS_PORT: String(metricsPort),
    };
    delete env.TEMPORAL_ADDRESS;
    delete env.WEBHOOK_SECRET_ENCRYPTION_KEYS;
    delete env.WEBHOOK_SECRET_ENCRYPTION_KEY;
    let output = '';
    child = spawn(process.execPath, [path.join(root, 'scripts', 'start.js')], { cwd: root, env, detached: true });
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child?.once('exit', (code) => resolve(code)));

    const state = await waitFor(
      () => (child?.exitCode !== null ? 'exited' : output.includes('Ctrl-C stops everything.') ? 'ready' : undefined),
      { timeoutMs: 120_000, intervalMs: 200, what: 'start to be ready' },
    );
    expect(state, output).toBe('ready');
    expect(output).toContain(`API          http://127.0.0.1:${apiPort}`);
    expect(output).toContain(`Temporal UI  http://127.0.0.1:${uiPort}`);

    const ready = await fetch(`http://127.0.0.1:${apiPort}/readyz`);
    expect(await ready.json()).toEqual({ status: 'ready', checks: { postgres: 'ok', temporal: 'ok' } });
    expect((await fetch(`http://127.0.0.1:${uiPort}/`)).status).toBe(200);

    // Without a configured key, development seals secrets under a local key made in the data directory.
    const keyFile = path.join(dataDir, 'secret-encryption.key');
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    expect(output).toContain(`secrets      made a local encryption key in ${keyFile}`);
    expect(output).not.toContain(readFileSync(keyFile, 'utf8').trim());
    expect(output).not.toContain('WEBHOOK_SECRET_ENCRYPTION_KEYS is not set');

    // One process, one page: the API's pool and the worker's, and the Temporal SDK's worker metrics.
    expect(output).toContain(`Metrics      http://127.0.0.1:${metricsPort}/metrics`);
    const metrics = await scrape(`http://127.0.0.1:${metricsPort}/metrics`);
    expect(valueOf(metrics, 'parcel_webhooks_db_pool_max_connections', { pool: 'api' })).toBe(10);
    expect(valueOf(metrics, 'parcel_webhooks_db_pool_max_connections', { pool: 'worker' })).toBe(10);
    expect(metrics.some((s) => s.name.startsWith('temporal_'))).toBe(true);

    const connection = await Connection.connect({ address: `127.0.0.1:${devPort}` });
    try {
      const attributes = await connection.operatorService.listSearchAttributes({ namespace: 'default' });
      expect(Object.keys(attributes.customAttributes ?? {})).toEqual(
        expect.arrayContaining(Object.keys(SEARCH_ATTRIBUTE_SDK_TYPES)),
      );
      // The worker `start` runs polls the default task queue and reaches the database it migrated.
      const probe = await new Client({ connection }).workflow.execute('healthProbe', {
        taskQueue: 'parcel-webhooks',
        workflowId: `start-test-probe-${devPort}`,
        workflowExecutionTimeout: '30s',
      });
      expect(probe).toMatchObject({ worker: 'ok' });
    } finally {
      await connection.close();
    }

    process.kill(-(child.pid as number), 'SIGINT');
    const code = await Promise.race([
      exited,
      new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), 30_000).unref()),
    ]);
    expect(code).toBe(0);
    expect(output).toContain('stopped.');
    await waitFor(() => !groupAlive(child?.pid as number), {
      timeoutMs: 15_000,
      what: 'every process of the group to exit',
    });
  });
});
