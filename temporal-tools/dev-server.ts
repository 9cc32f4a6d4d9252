import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { SEARCH_ATTRIBUTE_CLI_TYPES } from '../src/core/delivery-contract';
import { childStopper } from './child-process';
import { dynamicConfigValues } from './dynamic-config';
import { DEFAULT_DYNAMIC_CONFIG_FILE, devServerEnv } from './temporal-server-config';

export interface DevServerOptions {
  cliPath: string;
  port: number;
  /** undefined: headless (no Web UI). */
  uiPort?: number;
  /** SQLite file; undefined keeps everything in memory. */
  dbFile?: string;
  namespace?: string;
  log?: (line: string) => void;
  readyTimeoutMs?: number;
  /** Appended to the arguments (the benchmark adds its metrics port and dynamic config). */
  extraArgs?: string[];
}

export interface DevServer {
  address: string;
  uiUrl: string | undefined;
  process: ChildProcess;
  args: string[];
  /** The Go runtime's settings it runs with (GOGC, GOMAXPROCS). */
  goEnv: { GOGC?: string; GOMAXPROCS?: string };
  stop(): Promise<void>;
}

export function devServerArgs(options: DevServerOptions): string[] {
  const args = ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(options.port), '--log-level', 'error'];
  args.push('--namespace', options.namespace ?? 'default');
  if (options.uiPort === undefined) args.push('--headless');
  else args.push('--ui-port', String(options.uiPort));
  if (options.dbFile) {
    mkdirSync(path.dirname(options.dbFile), { recursive: true });
    // What the Temporal SDK's own stress tests use for a file database.
    args.push(
      '--db-filename',
      options.dbFile,
      '--sqlite-pragma',
      'journal_mode=WAL',
      '--sqlite-pragma',
      'synchronous=OFF',
    );
  }
  for (const [name, type] of Object.entries(SEARCH_ATTRIBUTE_CLI_TYPES))
    args.push('--search-attribute', `${name}=${type}`);
  // The committed dynamic config, the same file the full server reads (its reasons are written there).
  for (const [key, value] of Object.entries(dynamicConfigValues(DEFAULT_DYNAMIC_CONFIG_FILE))) {
    args.push('--dynamic-config-value', `${key}=${JSON.stringify(value)}`);
  }
  args.push(...(options.extraArgs ?? []));
  return args;
}

/** Polls the frontend until it answers, failing early if the server process exits. */
async function waitUntilServing(address: string, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`Temporal dev server exited with code ${child.exitCode}`);
    try {
      const connection = await Connection.connect({ address, connectTimeout: 1_000 });
      try {
        await connection.workflowService.getSystemInfo({});
        return;
      } finally {
        await connection.close();
      }
    } catch (err) {
      lastError = err;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  throw new Error(`Temporal dev server not ready on ${address} after ${timeoutMs} ms: ${String(lastError)}`);
}

/** Starts `temporal server start-dev` and resolves once it answers gRPC; stop() ends it and waits for exit. */
export async function startDevServer(options: DevServerOptions): Promise<DevServer> {
  const address = `127.0.0.1:${options.port}`;
  const args = devServerArgs(options);
  const env = devServerEnv(availableParallelism());
  const child = spawn(options.cliPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env });
  const log = options.log;
  const forward = (chunk: Buffer) => {
    if (log) for (const line of chunk.toString().split('\n')) if (line.trim()) log(line);
  };
  child.stdout?.on('data', forward);
  child.stderr?.on('data', forward);
  const stopWith = childStopper(child);
  const stop = () => stopWith();
  try {
    await waitUntilServing(address, child, options.readyTimeoutMs ?? 60_000);
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    address,
    uiUrl: options.uiPort === undefined ? undefined : `http://127.0.0.1:${options.uiPort}`,
    process: child,
    args,
    goEnv: { GOGC: env.GOGC, GOMAXPROCS: env.GOMAXPROCS },
    stop,
  };
}
