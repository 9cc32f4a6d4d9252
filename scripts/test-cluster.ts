/**
 * `npm run test:cluster`: the delivery, outbox, crash-recovery and replay tests against the full Temporal server
 * on PostgreSQL (temporal-tools/temporal-server.ts) instead of the dev server, then the chaos suite on a full server of
 * its own (`npm run chaos -- --cluster`, which stops and starts that server for its Temporal outage). Each part
 * gets its own databases and ports, dropped and freed at the end, whatever the outcome. Not part of `npm test`:
 * the first build takes minutes. Options and filters: scripts/test-cluster-plan.ts (`-- --help`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SEARCH_ATTRIBUTE_CLI_TYPES } from '../src/core/delivery-contract';
import {
  dropTemporalDatabases,
  ensureTemporalServer,
  setupTemporalDatabases,
  startTemporalServer,
  type TemporalServer,
  type TemporalServerInstall,
} from '../temporal-tools/temporal-server';
import { parseClusterArgs, testFiles, unmatchedFilters, USAGE, type ClusterPlan } from './test-cluster-plan';

/** The vitest files take a few minutes; past this they are hung, and the run must still clean up. */
const VITEST_TIMEOUT_MS = 30 * 60_000;
/** The chaos suite stops itself after 15 minutes; this is the backstop if it cannot. */
const CHAOS_TIMEOUT_MS = 17 * 60_000;
const root = path.join(__dirname, '..');
const say = (msg: string) => process.stderr.write(`[test:cluster] ${msg}\n`);
const seconds = (since: number) => `${((Date.now() - since) / 1000).toFixed(1)} s`;

/** The child running now, so Ctrl-C reaches it (it cleans up after itself) before we clean up ours. */
let current: ChildProcess | undefined;
let interrupted = false;

async function main(): Promise<number> {
  let plan: ClusterPlan | 'help';
  try {
    plan = parseClusterArgs(process.argv.slice(2));
  } catch (err) {
    say((err as Error).message);
    return 2;
  }
  if (plan === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (plan.vitest) {
    const unmatched = unmatchedFilters(plan.files, testFiles(root));
    if (unmatched.length > 0) {
      say(`no test file matches ${unmatched.join(', ')}: nothing of it would run`);
      return 2;
    }
  }
  const onSignal = () => {
    interrupted = true;
    current?.kill('SIGTERM');
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  let started = Date.now();
  let install: TemporalServerInstall;
  try {
    install = await ensureTemporalServer({ log: say });
  } catch (err) {
    say(`could not build the Temporal server: ${(err as Error).message}`);
    return 2;
  }
  say(`server build ready in ${seconds(started)}`);

  const outcomes: string[] = [];
  let exitCode = 0;
  if (plan.vitest && !interrupted) {
    started = Date.now();
    const code = await vitestOnCluster(plan.files, install);
    outcomes.push(`vitest (${plan.files.join(' ')}): exit ${code} after ${seconds(started)}`);
    if (code !== 0) exitCode = code;
  }
  if (plan.chaos && !interrupted) {
    started = Date.now();
    const args = [
      '--cluster',
      ...(plan.chaosSeed === undefined ? [] : ['--seed', String(plan.chaosSeed)]),
      ...(plan.chaosWorkers === undefined ? [] : ['--workers', String(plan.chaosWorkers)]),
    ];
    const code = await runChild(
      path.join(root, 'node_modules', '.bin', 'tsx'),
      [path.join(root, 'test', 'chaos', 'run.ts'), ...args],
      {},
      CHAOS_TIMEOUT_MS,
    );
    outcomes.push(`chaos ${args.join(' ')}: exit ${code} after ${seconds(started)}`);
    if (code !== 0 && exitCode === 0) exitCode = code;
  }
  for (const line of outcomes) say(line);
  return interrupted ? 130 : exitCode;
}

/** The vitest files against a server on fresh databases, stopped and dropped afterwards. */
async function vitestOnCluster(files: string[], install: TemporalServerInstall): Promise<number> {
  const databaseUrl = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const prefix = `tc_${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
  const runDir = mkdtempSync(path.join(os.tmpdir(), 'parcel-cluster-'));
  let server: TemporalServer | undefined;
  let databasesMade = false;
  let exitCode = 1;
  try {
    let started = Date.now();
    databasesMade = true;
    const databases = await setupTemporalDatabases({ databaseUrl, prefix, install });
    say(`databases ${databases.temporal}, ${databases.visibility} set up in ${seconds(started)}`);
    started = Date.now();
    server = await startTemporalServer({
      databaseUrl,
      prefix,
      install,
      runDir,
      searchAttributes: SEARCH_ATTRIBUTE_CLI_TYPES,
    });
    const { persistenceStore, visibilityStore } = server.cluster;
    say(
      `Temporal ${server.address} ready in ${seconds(started)} (${server.numHistoryShards} history shards, ${persistenceStore}, visibility ${visibilityStore}); log ${server.logFile}`,
    );
    if (interrupted) return 130;
    // PARCEL_TEST_CLUSTER turns on the tests that start servers of their own (a crash and restart of one).
    exitCode = await runChild(
      path.join(root, 'node_modules', '.bin', 'vitest'),
      ['run', ...files],
      { TEMPORAL_ADDRESS: server.address, PARCEL_TEST_CLUSTER: '1' },
      VITEST_TIMEOUT_MS,
    );
    if (server.process.exitCode !== null)
      say(`the Temporal server died during the run (${server.process.exitCode}): see ${server.logFile}`);
  } catch (err) {
    say(`failed: ${(err as Error).message}`);
  } finally {
    await server?.stop();
    if (databasesMade)
      await dropTemporalDatabases({ databaseUrl, prefix, install }).catch((err: Error) =>
        say(`could not drop the databases: ${err.message}`),
      );
    // Its log is worth keeping when something failed; otherwise nothing of the run is left.
    if (exitCode === 0) rmSync(runDir, { recursive: true, force: true });
    else say(`server log kept in ${runDir}`);
  }
  return exitCode;
}

function runChild(command: string, args: string[], env: Record<string, string>, timeoutMs: number): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: root, stdio: 'inherit', env: { ...process.env, ...env } });
    current = child;
    const timer = setTimeout(() => {
      say(`${path.basename(command)} still running after ${Math.round(timeoutMs / 60_000)} min: stopping it`);
      child.kill('SIGTERM');
      setTimeout(() => child.kill('SIGKILL'), 30_000).unref();
    }, timeoutMs);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      current = undefined;
      resolve(code ?? (signal ? 1 : 0));
    });
    child.once('error', () => resolve(1));
  });
}

void main().then((code) => process.exit(code));
