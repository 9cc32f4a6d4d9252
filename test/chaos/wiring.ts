/**
 * Everything the chaos suite takes from outside test/chaos/, in one file: when sources move, only this file
 * changes. From the product it uses entry points (worker, API, CLI) as child processes and four stable
 * functions (database preparation, the dev server, the Temporal CLI, the full Temporal server); the rest is the public contract
 * (HTTP API, environment variables, workflow ids, table names) as the product documents it.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

export { dropDatabase, prepareDatabase } from '../../src/db/migrate';
export { startDevServer, type DevServer, type DevServerOptions } from '../../temporal-tools/dev-server';
export { childStopper } from '../../temporal-tools/child-process';
export { cachedCliPath, ensureTemporalCli } from '../../temporal-tools/temporal-cli';
export {
  dropTemporalDatabases,
  ensureTemporalServer,
  setupTemporalDatabases,
  startTemporalServer,
  type TemporalServer as FullTemporalServer,
  type TemporalServerInstall,
} from '../../temporal-tools/temporal-server';
/** Our search attributes, registered on the full server as `temporal-server` does (the dev server takes them as flags). */
export { SEARCH_ATTRIBUTE_CLI_TYPES } from '../../src/core/delivery-contract';

export { startReceiver, type Receiver, type ReceivedRequest, type Reply } from '../helpers/receiver';
export { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy';
export { freePort } from '../../temporal-tools/ports';
export { startWorkerProcess, type WorkerProcess } from '../helpers/worker-process';
export { FIXTURES } from '../helpers/paths';

export const ROOT = path.join(__dirname, '..', '..');

/** The API entry point, run as `node --import tsx <file>` (src/api/server.ts starts listening when run directly). */
export const API_ENTRY = path.join(ROOT, 'src', 'api', 'server.ts');

/** The compiled entry points `npm run build` makes, which production runs (`node dist/...`). */
const BUILT_ENTRIES = {
  worker: path.join(ROOT, 'dist', 'worker', 'main.js'),
  api: path.join(ROOT, 'dist', 'api', 'server.js'),
};

/** A build is a minute or two on 2 busy cores; past this something is wrong. */
const BUILD_TIMEOUT_MS = 10 * 60_000;

/**
 * `npm run build`, as a deployment makes it: the compiled services and the prebuilt workflow bundle, so a worker
 * starts without running webpack. Run at the start of every run that uses it, so it is never stale.
 */
export async function buildProduct(): Promise<typeof BUILT_ENTRIES> {
  try {
    await promisify(execFile)('npm', ['run', 'build'], {
      cwd: ROOT,
      timeout: BUILD_TIMEOUT_MS,
      maxBuffer: 16 * 1024 * 1024,
    });
  } catch (err) {
    const e = err as Error & { stdout?: string; stderr?: string };
    throw new Error(
      `npm run build failed: ${`${e.stdout ?? ''}${e.stderr ?? ''}`.trim().split('\n').slice(-5).join(' | ') || e.message}`,
      { cause: err },
    );
  }
  return BUILT_ENTRIES;
}

/** The operator CLI, as `npx parcel-webhooks` runs it: the `bin` of package.json. */
export function cliEntry(): string {
  const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { bin: Record<string, string> };
  const bin = Object.values(pkg.bin)[0];
  if (!bin) throw new Error('package.json has no bin');
  return path.join(ROOT, bin);
}

/** Each event is the workflow `event:<evt_id>` of type deliverEvent. */
export const EVENT_WORKFLOW_TYPE = 'deliverEvent';
export const eventWorkflowId = (eventId: string): string => `event:${eventId}`;
/** The endpoint's supervisor workflow. */
export const supervisorWorkflowId = (endpointId: string): string => `endpoint-supervisor:${endpointId}`;

/** The event kinds, from the catalogue (pure, no I/O). */
export { EVENT_TYPES, PARCEL_STATUS_BY_EVENT, type EventType } from '../../src/core/event-catalog';
