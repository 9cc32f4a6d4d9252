import path from 'node:path';
import type { ProcessEvent } from './processes';
import { log } from './runtime';
import {
  dropTemporalDatabases,
  SEARCH_ATTRIBUTE_CLI_TYPES,
  setupTemporalDatabases,
  startDevServer,
  startTemporalServer,
  type DevServerOptions,
  type FullTemporalServer,
  type TemporalServerInstall,
} from './wiring';

/**
 * The Temporal the run owns, which its "temporal outage" stops and starts again with its state: the dev server
 * on a file database (default), or with --cluster the full server on its own Postgres databases, restarted on
 * the same ports (and so as the same cluster member) as a redeployed server would be.
 */
export interface ChaosTemporal {
  readonly events: ProcessEvent[];
  /** Known once started; the same across restarts. */
  readonly address: string;
  /** One line for the log and the --out file: which server, with which persistence. */
  describe(): string;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** From now on start() refuses: the run is being torn down. */
  refuseRestarts(): void;
  close(): Promise<void>;
}

interface Running {
  pid: number | undefined;
  stop(): Promise<void>;
}

/** Start, stop and the teardown guard, the same for both servers. */
abstract class OwnedTemporal implements ChaosTemporal {
  readonly events: ProcessEvent[] = [];
  private running: Running | undefined;
  /** Set by close(): a fault still under way must not start the server again once the run is being torn down. */
  private closed = false;

  abstract get address(): string;
  abstract describe(): string;
  protected abstract launch(): Promise<Running>;

  async start(): Promise<void> {
    if (this.closed) throw new Error('temporal: not restarted, the run is stopping');
    const running = await this.launch();
    if (this.closed) {
      await running.stop();
      throw new Error('temporal: stopped again at once, the run is stopping');
    }
    this.running = running;
    this.events.push({ at: Date.now(), process: 'temporal', kind: 'started', byChaos: true, pid: running.pid });
    log(`temporal ${running.pid}: serving on ${this.address}`);
  }

  refuseRestarts(): void {
    this.closed = true;
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.stop();
  }

  async stop(): Promise<void> {
    const running = this.running;
    if (!running) return;
    this.running = undefined;
    await running.stop();
    this.events.push({ at: Date.now(), process: 'temporal', kind: 'stopped', byChaos: true, pid: running.pid });
    log(`temporal ${running.pid}: stopped`);
  }
}

/** The Temporal CLI's dev server on a file database (one history shard on SQLite). */
export class DevTemporal extends OwnedTemporal {
  private readonly output: string[] = [];

  constructor(private readonly options: DevServerOptions) {
    super();
  }

  get address(): string {
    return `127.0.0.1:${this.options.port}`;
  }

  describe(): string {
    return `Temporal dev server on ${this.address} (file database ${this.options.dbFile ?? 'in memory'})`;
  }

  protected async launch(): Promise<Running> {
    const server = await startDevServer({
      ...this.options,
      readyTimeoutMs: 90_000,
      log: (line) => {
        this.output.push(line);
        if (this.output.length > 50) this.output.shift();
      },
    });
    return { pid: server.process.pid, stop: () => server.stop() };
  }
}

/**
 * The full server (temporal-tools/temporal-server.ts) on databases `temporal_<prefix>` and `..._visibility`, made by
 * createDatabases() and dropped by dropDatabases() once it is stopped. Each start logs to its own folder under
 * `dir` (temporal-1/server.log, temporal-2/...), so the log of the stop and of the restart are both kept.
 */
export class ClusterTemporal extends OwnedTemporal {
  private ports: FullTemporalServer['ports'] | undefined;
  private facts: string | undefined;
  private starts = 0;

  constructor(
    private readonly options: {
      databaseUrl: string;
      prefix: string;
      install: TemporalServerInstall;
      dir: string;
      /** The server's Postgres pools (the tool's default when absent). */
      maxConns?: { default: number; visibility: number };
    },
  ) {
    super();
  }

  get address(): string {
    if (!this.ports) throw new Error('temporal: the full server has not started yet');
    return `127.0.0.1:${this.ports.frontendGrpc}`;
  }

  describe(): string {
    return `full Temporal server on ${this.ports ? this.address : '(not started)'} (${this.facts ?? '?'}; logs in ${this.options.dir}/temporal-*/)`;
  }

  async createDatabases(): Promise<void> {
    const databases = await setupTemporalDatabases(this.options);
    log(`temporal databases ${databases.temporal}, ${databases.visibility} set up`);
  }

  dropDatabases(): Promise<void> {
    return dropTemporalDatabases(this.options);
  }

  protected async launch(): Promise<Running> {
    this.starts += 1;
    const server = await startTemporalServer({
      databaseUrl: this.options.databaseUrl,
      prefix: this.options.prefix,
      install: this.options.install,
      // The first start picks free ports; every restart takes the same ones, so the address the API and the
      // worker were given stays right and the new instance replaces the old one in cluster_membership.
      ports: this.ports,
      runDir: path.join(this.options.dir, `temporal-${this.starts}`),
      searchAttributes: SEARCH_ATTRIBUTE_CLI_TYPES,
      readyTimeoutMs: 90_000,
      ...(this.options.maxConns ? { maxConns: this.options.maxConns } : {}),
    });
    this.ports = server.ports;
    this.facts = `${server.numHistoryShards} history shards, ${server.cluster.persistenceStore}, visibility ${server.cluster.visibilityStore}`;
    return { pid: server.process.pid, stop: () => server.stop() };
  }
}
