/**
 * Runnable example receiver:
 *
 *   RECEIVER_DATABASE_URL=postgres://postgres@127.0.0.1:5432/merchant \
 *   WEBHOOK_SECRET=whsec_... RECEIVER_TLS_CERT=cert.pem RECEIVER_TLS_KEY=key.pem \
 *   npx tsx src/receiver/example/main.ts (from the repository root)
 *
 * The service only posts to https URLs; without RECEIVER_TLS_* it listens on plain http, for use
 * behind a TLS-terminating proxy or for local tries.
 */
import { readFileSync } from 'node:fs';
import pg from 'pg';
import type { EventHandler } from './processor';
import { buildReceiver } from './server';

export interface ReceiverConfig {
  port: number;
  host: string;
  databaseUrl: string;
  secrets: string[];
  tls?: { certFile: string; keyFile: string };
}

/** Reads the environment once; a missing or bad value stops the process with one line naming it. */
export function receiverConfigFromEnv(env: NodeJS.ProcessEnv): ReceiverConfig {
  const fail = (message: string): never => {
    throw new Error(`receiver config: ${message}`);
  };
  const port = Number(env.RECEIVER_PORT || '4000');
  if (!Number.isInteger(port) || port < 0 || port > 65535) fail('RECEIVER_PORT must be a port number');
  const databaseUrl = env.RECEIVER_DATABASE_URL ?? fail('RECEIVER_DATABASE_URL is required');
  // WEBHOOK_SECRETS holds old and new during a rotation, comma-separated; WEBHOOK_SECRET is the common case.
  const secrets = (env.WEBHOOK_SECRETS ?? env.WEBHOOK_SECRET ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (secrets.length === 0) fail('WEBHOOK_SECRET (or WEBHOOK_SECRETS, comma-separated) is required');
  const certFile = env.RECEIVER_TLS_CERT;
  const keyFile = env.RECEIVER_TLS_KEY;
  if (Boolean(certFile) !== Boolean(keyFile)) fail('set both RECEIVER_TLS_CERT and RECEIVER_TLS_KEY, or neither');
  return {
    port,
    host: env.RECEIVER_HOST ?? '0.0.0.0',
    databaseUrl,
    secrets,
    ...(certFile && keyFile ? { tls: { certFile, keyFile } } : {}),
  };
}

/**
 * Where a merchant's business logic goes. Everything written through the handler's second argument (the
 * transaction's client) commits together with the event's processed_at, so a cod.settled is credited exactly once
 * however many times it is delivered.
 */
export const handleEvent: EventHandler = async (event, _tx) => {
  switch (event.type) {
    case 'cod.settled':
      // e.g. credit event.data.cod_settlement to the order of event.data.parcel:
      //   await _tx.query('UPDATE orders SET cod_paid = cod_paid + $1 WHERE parcel_id = $2 AND currency = $3',
      //                   [event.data.cod_settlement.amount, event.data.parcel.id, event.data.cod_settlement.currency]);
      return;
    case 'parcel.delivered':
      // e.g. mark the order fulfilled:
      //   await _tx.query('UPDATE orders SET ... WHERE parcel_id = $1', [event.data.parcel.id]);
      return;
    default:
      // Kinds this receiver does not act on are still stored and marked processed, so they are not retried.
      return;
  }
};

async function main(): Promise<void> {
  const config = receiverConfigFromEnv(process.env);
  const pool = new pg.Pool({ connectionString: config.databaseUrl, max: 10 });
  pool.on('error', () => undefined); // a dropped idle connection must not kill the receiver
  const receiver = await buildReceiver({
    pool,
    secrets: config.secrets,
    onEvent: handleEvent,
    logger: true,
    ...(config.tls
      ? { https: { cert: readFileSync(config.tls.certFile), key: readFileSync(config.tls.keyFile) } }
      : {}),
  });
  const recovered = await receiver.processor.processPending();
  if (recovered > 0) receiver.app.log.info({ recovered }, 'processed events left over from a previous run');
  const url = await receiver.listen(config.port, config.host);
  receiver.app.log.info({ url }, 'receiving webhooks');

  const shutdown = (): void => {
    receiver
      .close()
      .then(() => pool.end())
      .then(
        () => process.exit(0),
        () => process.exit(1),
      );
  };
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}
