import { SEARCH_ATTRIBUTE_CLI_TYPES } from '../src/core/delivery-contract';
import {
  dropTemporalDatabases,
  ensureTemporalServer,
  setupTemporalDatabases,
  startTemporalServer,
} from '../temporal-tools/temporal-server';

export interface BenchCluster {
  address: string;
  /** What the numbers were measured on, recorded beside them. */
  settings: { server: string; historyShards: number; persistence: string; visibility: string; databases: string[] };
  stop(): Promise<void>;
}

/** `npm run bench -- --cluster`: the full server on fresh Postgres databases, dropped by stop(). */
export async function startBenchCluster(runId: string, log: (msg: string) => void): Promise<BenchCluster> {
  const install = await ensureTemporalServer({ log });
  const base = { databaseUrl: 'postgres://postgres@127.0.0.1:5432/postgres', prefix: runId.toLowerCase(), install };
  const databases = await setupTemporalDatabases(base);
  try {
    const server = await startTemporalServer({ ...base, searchAttributes: SEARCH_ATTRIBUTE_CLI_TYPES });
    return {
      address: server.address,
      settings: {
        server: 'temporal-server 1.29.1 (frontend, history, matching, worker in one process)',
        historyShards: server.numHistoryShards,
        persistence: server.cluster.persistenceStore,
        visibility: server.cluster.visibilityStore,
        databases: [databases.temporal, databases.visibility],
      },
      async stop() {
        await server.stop();
        await dropTemporalDatabases(base);
      },
    };
  } catch (err) {
    await dropTemporalDatabases(base).catch(() => undefined);
    throw err;
  }
}
