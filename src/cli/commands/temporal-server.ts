import path from 'node:path';
import type { Command } from 'commander';
import { SEARCH_ATTRIBUTE_CLI_TYPES } from '../../core/delivery-contract';
import { CliError, print, type CliContext } from '../context';
import { DEFAULT_SERVER_SHARDS, loadTemporalTooling, type TemporalServerModule } from '../temporal-tooling';

interface TemporalServerOptions {
  port: string;
  shards: string;
  dbPrefix: string;
}

function positiveInt(value: string, flag: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 65535)
    throw new CliError(`${flag} must be a positive integer (got ${value})`, 2);
  return n;
}

export function registerTemporalServer(program: Command, ctx: CliContext): void {
  program
    .command('temporal-server')
    .description(
      "Run the full Temporal server 1.29.1 on PostgreSQL (DATABASE_URL's server): built once, its own databases, our search attributes",
    )
    .option('--port <port>', 'frontend gRPC port', '7233')
    .option('--shards <n>', 'history shards (fixed once the databases exist)', String(DEFAULT_SERVER_SHARDS))
    .option('--db-prefix <name>', 'databases temporal_<name> and temporal_<name>_visibility', 'local')
    .option('--json', 'print one JSON document once the server is ready')
    .action(async (options: TemporalServerOptions, command: Command) => {
      const port = positiveInt(options.port, '--port');
      const shards = positiveInt(options.shards, '--shards');
      // Loaded here, not at the top: only this command needs the server tooling, and only a checkout has it.
      const tooling = loadTemporalTooling('temporal-server', {
        command: '`temporal-server`',
        otherwise: 'run it from a checkout, or run the server docker-compose.yml defines',
      });
      const say = (msg: string) => process.stderr.write(`${msg}\n`);
      const install = await tooling.ensureTemporalServer({ log: say });
      const base = { databaseUrl: ctx.config.databaseUrl, prefix: options.dbPrefix, install };
      const databases = await tooling.setupTemporalDatabases(base);
      const started = Date.now();
      const server = await tooling.startTemporalServer({
        ...base,
        port,
        numHistoryShards: shards,
        namespace: ctx.config.temporal.namespace,
        searchAttributes: SEARCH_ATTRIBUTE_CLI_TYPES,
        // Kept after a stop, so server.log can be read when it died.
        runDir: path.resolve(ctx.config.dataDir, 'temporal-server'),
      });
      const document = {
        address: server.address,
        namespace: server.namespace,
        databases,
        shards: server.numHistoryShards,
        persistence: { store: server.cluster.persistenceStore, visibility: server.cluster.visibilityStore },
        logFile: server.logFile,
      };
      if (server.numHistoryShards !== shards) {
        say(
          `warning: ${databases.temporal} was created with ${server.numHistoryShards} history shards, which cannot change; --shards ${shards} ignored (use another --db-prefix)`,
        );
      }
      print(command, document, () =>
        [
          `Temporal ${server.address} ready in ${((Date.now() - started) / 1000).toFixed(1)} s (namespace ${server.namespace}, ${server.numHistoryShards} history shards, ${server.cluster.persistenceStore}, visibility ${server.cluster.visibilityStore})`,
          `databases ${databases.temporal}, ${databases.visibility}; log ${server.logFile}`,
          'Ctrl-C stops it.',
        ].join('\n'),
      );
      const exitCode = await untilStopped(server);
      if (exitCode !== undefined)
        throw new CliError(`Temporal server exited on its own (${exitCode}); see ${server.logFile}`);
    });
}

/** Resolves once SIGINT/SIGTERM stopped the server, or with its exit code if it died first. */
async function untilStopped(
  server: Awaited<ReturnType<TemporalServerModule['startTemporalServer']>>,
): Promise<string | undefined> {
  const signalled = new Promise<'signal'>((resolve) => {
    process.once('SIGINT', () => resolve('signal'));
    process.once('SIGTERM', () => resolve('signal'));
  });
  const died = new Promise<string>((resolve) =>
    server.process.once('exit', (code, signal) => resolve(String(code ?? signal))),
  );
  const outcome = await Promise.race([signalled, died]);
  await server.stop();
  return outcome === 'signal' ? undefined : outcome;
}
