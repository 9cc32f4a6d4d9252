import { Client, Connection } from '@temporalio/client';
import { loadConfigOrExit, type Config } from '../infra/config';
import { requireTemporalAddress, temporalConnectionOptions } from '../infra/temporal';
import { createPool } from '../db/pool';
import { buildApp } from './app';

export interface RunningApi {
  url: string;
  close(): Promise<void>;
}

/** Starts the API on config.port; the Temporal connection is lazy so the API starts while Temporal is down. */
export async function startApi(config: Config): Promise<RunningApi> {
  const pool = createPool(config.databaseUrl);
  const connection = Connection.lazy(temporalConnectionOptions(config, requireTemporalAddress(config)));
  const temporal = new Client({ connection, namespace: config.temporal.namespace });
  const app = await buildApp({ config, pool, temporal });
  const address = await app.listen({ port: config.port, host: config.host });
  return {
    url: address.replace('0.0.0.0', '127.0.0.1').replace('[::]', '127.0.0.1'),
    async close() {
      await app.close();
      await connection.close();
      await pool.end();
    },
  };
}

if (require.main === module) {
  const config = loadConfigOrExit();
  startApi(config).then(
    (api) => {
      const shutdown = () => {
        api.close().then(
          () => process.exit(0),
          () => process.exit(1),
        );
      };
      process.once('SIGINT', shutdown);
      process.once('SIGTERM', shutdown);
    },
    (err) => {
      process.stderr.write(`api: failed to start: ${(err as Error).message}\n`);
      process.exit(1);
    },
  );
}
