import { startDevServer, type DevServerOptions } from '../temporal-tools/dev-server';

/**
 * The dev server `npm start` runs (same arguments from temporal-tools/dev-server.ts), plus the two things only a
 * benchmark needs: the Prometheus endpoint (persistence requests per operation) and extra dynamic config, so
 * a run records exactly which server settings it measured.
 */
export interface BenchServer {
  address: string;
  metricsUrl: string;
  uiUrl: string | undefined;
  pid: number;
  args: string[];
  goEnv: { GOGC?: string; GOMAXPROCS?: string };
  stop(): Promise<void>;
}

export interface BenchServerOptions extends DevServerOptions {
  metricsPort: number;
  dynamicConfig?: Record<string, string | number | boolean>;
}

export function benchServerArgs(options: BenchServerOptions): string[] {
  const args = ['--metrics-port', String(options.metricsPort)];
  for (const [key, value] of Object.entries(options.dynamicConfig ?? {}))
    args.push('--dynamic-config-value', `${key}=${value}`);
  return args;
}

/** The dev server of temporal-tools/dev-server.ts with the benchmark's arguments; no copy of its start and stop. */
export async function startBenchServer(options: BenchServerOptions): Promise<BenchServer> {
  const { log } = options;
  const server = await startDevServer({
    ...options,
    extraArgs: benchServerArgs(options),
    // A worker shut down mid-task makes the server log each cancelled update: expected at the end of a phase.
    log:
      log &&
      ((line) => {
        if (!line.includes('context canceled')) log(line.trim());
      }),
  });
  return {
    address: server.address,
    metricsUrl: `http://127.0.0.1:${options.metricsPort}/metrics`,
    uiUrl: server.uiUrl,
    pid: server.process.pid as number,
    args: server.args,
    goEnv: server.goEnv,
    stop: () => server.stop(),
  };
}
