import { spawn, type ChildProcess } from 'node:child_process';
import { devServerArgs, waitUntilServing, type DevServerOptions } from '../infra/dev-server';

/**
 * The dev server `npm start` runs (same arguments from infra/dev-server.ts), plus the two things only a
 * benchmark needs: the Prometheus endpoint (persistence requests per operation) and extra dynamic config, so
 * a run records exactly which server settings it measured.
 */
export interface BenchServer {
  address: string;
  metricsUrl: string;
  uiUrl: string | undefined;
  pid: number;
  args: string[];
  stop(): Promise<void>;
}

export interface BenchServerOptions extends DevServerOptions {
  metricsPort: number;
  dynamicConfig?: Record<string, string | number | boolean>;
}

export function benchServerArgs(options: BenchServerOptions): string[] {
  const args = [...devServerArgs(options), '--metrics-port', String(options.metricsPort)];
  for (const [key, value] of Object.entries(options.dynamicConfig ?? {})) args.push('--dynamic-config-value', `${key}=${value}`);
  return args;
}

export async function startBenchServer(options: BenchServerOptions): Promise<BenchServer> {
  const address = `127.0.0.1:${options.port}`;
  const args = benchServerArgs(options);
  const child = spawn(options.cliPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  child.stderr?.on('data', (chunk: Buffer) => {
    // A worker shut down mid-task makes the server log each cancelled update: expected at the end of a phase.
    for (const line of chunk.toString().split('\n')) if (line.trim() && !line.includes('context canceled')) options.log?.(line.trim());
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const killTimer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(killTimer);
  };
  try {
    await waitUntilServing(address, child, options.readyTimeoutMs ?? 60_000);
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    address,
    metricsUrl: `http://127.0.0.1:${options.metricsPort}/metrics`,
    uiUrl: options.uiPort === undefined ? undefined : `http://127.0.0.1:${options.uiPort}`,
    pid: child.pid as number,
    args,
    stop,
  };
}
