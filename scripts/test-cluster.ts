/**
 * `npm run test:cluster`: the delivery, crash-recovery and replay tests against the full Temporal server on
 * PostgreSQL (infra/temporal-server.ts) instead of the dev server. Each run gets its own databases and ports,
 * dropped and freed at the end, whatever the outcome. Not part of `npm test`: the first build takes minutes.
 * Extra arguments replace the default test files (vitest filters), e.g. `npm run test:cluster -- delivery-basic`.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SEARCH_ATTRIBUTE_TYPE_NAMES as SEARCH_ATTRIBUTE_DEFINITIONS } from '../core/delivery-contract';
import {
  dropTemporalDatabases,
  ensureTemporalServer,
  setupTemporalDatabases,
  startTemporalServer,
  type TemporalServer,
} from '../infra/temporal-server';

const DEFAULT_FILES = ['test/integration/delivery-', 'test/e2e/crash-recovery.test.ts', 'test/integration/replay.test.ts'];
/** The suite above takes a few minutes; past this it is hung, and the run must still clean up. */
const VITEST_TIMEOUT_MS = 30 * 60_000;
const root = path.join(__dirname, '..');
const say = (msg: string) => process.stderr.write(`[test:cluster] ${msg}\n`);
const seconds = (since: number) => `${((Date.now() - since) / 1000).toFixed(1)} s`;

async function main(): Promise<number> {
  const databaseUrl = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const prefix = `tc_${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
  const runDir = mkdtempSync(path.join(os.tmpdir(), 'parcel-cluster-'));
  let server: TemporalServer | undefined;
  let vitest: ReturnType<typeof spawn> | undefined;
  let databasesMade = false;
  let interrupted = false;
  const onSignal = () => {
    interrupted = true;
    vitest?.kill('SIGTERM');
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  let exitCode = 1;
  try {
    let started = Date.now();
    const install = await ensureTemporalServer({ log: say });
    say(`server build ready in ${seconds(started)}`);
    started = Date.now();
    databasesMade = true;
    const databases = await setupTemporalDatabases({ databaseUrl, prefix, install });
    say(`databases ${databases.temporal}, ${databases.visibility} set up in ${seconds(started)}`);
    started = Date.now();
    server = await startTemporalServer({ databaseUrl, prefix, install, runDir, searchAttributes: SEARCH_ATTRIBUTE_DEFINITIONS });
    const { persistenceStore, visibilityStore } = server.cluster;
    say(`Temporal ${server.address} ready in ${seconds(started)} (${server.numHistoryShards} history shards, ${persistenceStore}, visibility ${visibilityStore}); log ${server.logFile}`);
    if (interrupted) return 130;

    const files = process.argv.length > 2 ? process.argv.slice(2) : DEFAULT_FILES;
    started = Date.now();
    exitCode = await runVitest(files, server.address, (child) => (vitest = child));
    say(`vitest exited ${exitCode} after ${seconds(started)}`);
    if (server.process.exitCode !== null) say(`the Temporal server died during the run (${server.process.exitCode}): see ${server.logFile}`);
  } catch (err) {
    say(`failed: ${(err as Error).message}`);
  } finally {
    await server?.stop();
    if (databasesMade) await dropTemporalDatabases({ databaseUrl, prefix }).catch((err: Error) => say(`could not drop the databases: ${err.message}`));
    // Its log is worth keeping when something failed; otherwise nothing of the run is left.
    if (exitCode === 0) rmSync(runDir, { recursive: true, force: true });
    else say(`server log kept in ${runDir}`);
  }
  return interrupted ? 130 : exitCode;
}

function runVitest(files: string[], address: string, started: (child: ReturnType<typeof spawn>) => void): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(path.join(root, 'node_modules', '.bin', 'vitest'), ['run', ...files], {
      cwd: root,
      stdio: 'inherit',
      // PARCEL_TEST_CLUSTER turns on the tests that start servers of their own (a crash and restart of one).
      env: { ...process.env, TEMPORAL_ADDRESS: address, PARCEL_TEST_CLUSTER: '1' },
    });
    started(child);
    const timer = setTimeout(() => {
      say(`vitest still running after ${VITEST_TIMEOUT_MS / 60_000} min: stopping it`);
      child.kill('SIGTERM');
      setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
    }, VITEST_TIMEOUT_MS);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      resolve(code ?? (signal ? 1 : 0));
    });
    child.once('error', () => resolve(1));
  });
}

main().then((code) => process.exit(code));
