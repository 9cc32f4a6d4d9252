import { readFileSync } from 'node:fs';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import type { Config } from './config';

type ConnectionOptions = Parameters<typeof Connection.connect>[0] & Parameters<typeof NativeConnection.connect>[0];

/** Shared by client and worker connections: plain for the dev server, mTLS or API key for Temporal Cloud. */
export function temporalConnectionOptions(config: Config, address: string): ConnectionOptions {
  const { tlsCertPath, tlsKeyPath, apiKey } = config.temporal;
  const options: ConnectionOptions = { address };
  if (tlsCertPath && tlsKeyPath) {
    options.tls = { clientCertPair: { crt: readFileSync(tlsCertPath), key: readFileSync(tlsKeyPath) } };
  } else if (apiKey) {
    options.tls = true;
    options.apiKey = apiKey;
  }
  return options;
}

export function requireTemporalAddress(config: Config): string {
  return config.temporal.address ?? `127.0.0.1:${config.temporal.devPort}`;
}

export async function connectClient(config: Config): Promise<Client> {
  const connection = await Connection.connect(temporalConnectionOptions(config, requireTemporalAddress(config)));
  return new Client({ connection, namespace: config.temporal.namespace });
}

/** A client whose connection opens on first use, so the API starts (and answers /readyz) while Temporal is down. */
export function lazyClient(config: Config): Client {
  const connection = Connection.lazy(temporalConnectionOptions(config, requireTemporalAddress(config)));
  return new Client({ connection, namespace: config.temporal.namespace });
}
