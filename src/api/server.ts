import Fastify, { type FastifyInstance, type FastifyReply, type FastifyServerOptions } from 'fastify';
import fp from 'fastify-plugin';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { ApiError } from '../core/errors';
import { checkSecretsSealed } from '../domain/secret-reencryption';
import { randomBase62 } from '../core/ids';
import { loadConfigOrExit, unsafeSettingWarnings, type Config } from '../infra/config';
import { serveMetrics } from '../infra/metrics-server';
import { activeTracing, startTracing } from '../infra/tracing';
import app, { type AppOptions } from './app';
import { clientErrorHandler, CONNECTIONS_CHECK_MS, REQUEST_TIMEOUT_MS } from './errors';
import { listenInternal } from './internal-port';
import { prettyLogStream, serializeRequest } from './logging';

/** Where keys and secrets could appear in a log line; pino replaces them. */
export const LOG_REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  'authorization',
  'key',
  'secret',
  '*.key',
  '*.secret',
];

export interface LogOutput {
  /** Readable lines instead of JSON; by default when stdout is a terminal (`npm start` by hand). */
  pretty?: boolean;
  /** Where lines go; stdout by default. */
  destination?: NodeJS.WritableStream;
}

/** JSON lines for log collectors; on a terminal, the same records as readable lines (api/logging.ts). */
export function loggerOptions(config: Config, output: LogOutput = {}): FastifyServerOptions['logger'] {
  const options = {
    level: config.logLevel,
    redact: { paths: LOG_REDACT_PATHS, censor: '[redacted]' },
    serializers: { req: serializeRequest },
  };
  const destination = output.destination ?? process.stdout;
  if (!(output.pretty ?? process.stdout.isTTY === true))
    return output.destination ? { ...options, stream: destination } : options;
  const colorize = output.destination === undefined && process.stdout.isTTY === true;
  return { ...options, stream: prettyLogStream(destination, colorize) };
}

/**
 * TRUST_PROXY as Fastify takes it. A hop count trusts that many hops nearest us whatever their address (Fastify
 * itself reads a bare number as trusting none): like `true`, only for an API reachable through its proxies alone.
 */
export function trustProxyOption(trust: Config['trustProxy']): FastifyServerOptions['trustProxy'] {
  return typeof trust === 'number' ? (_address: string, hop: number) => hop < trust : trust;
}

/**
 * The Fastify instance with the app registered, not listening: what the process below runs, and what tests
 * and benches inject into. Options that only an instance can take (limits, ids, parser errors) are set here.
 */
export async function buildServer(
  options: AppOptions,
  server: { logger?: FastifyServerOptions['logger']; requestTimeoutMs?: number } = {},
): Promise<FastifyInstance> {
  // A whole request, its headers first among it, must arrive within this (Fastify's own default is no limit).
  const requestTimeout = server.requestTimeoutMs ?? REQUEST_TIMEOUT_MS;
  const fastify = Fastify({
    logger: server.logger ?? loggerOptions(options.config),
    bodyLimit: 64 * 1024,
    requestTimeout,
    http: { headersTimeout: requestTimeout, connectionsCheckingInterval: CONNECTIONS_CHECK_MS },
    routerOptions: { maxParamLength: 200 },
    genReqId: () => `req_${randomBase62(20)}`,
    // Client address, scheme and host from X-Forwarded-* only for the hops TRUST_PROXY names: rate limits count
    // the real client behind a proxy, and nobody else can claim an address by sending the header.
    trustProxy: trustProxyOption(options.config.trustProxy),
    // The router refuses bad percent-encoding and over-long params before any handler or error handler runs;
    // answer those in the same wire shape as every other error.
    frameworkErrors: (_error, request, reply) => {
      const apiError = new ApiError('invalid_request', 'The request URL is malformed or a path parameter is too long.');
      (reply as FastifyReply).header('Request-Id', request.id).status(apiError.status).send(apiError.toBody());
    },
    clientErrorHandler,
  }).withTypeProvider<TypeBoxTypeProvider>();
  // fp: the app's decorators, hooks and error handler belong to this instance, not to an encapsulated child.
  await fastify.register(fp(app), options);
  return fastify;
}

export interface RunningApi {
  url: string;
  /** Where the internal routes answer: `url` unless INTERNAL_PORT is set. */
  internalUrl: string;
  close(): Promise<void>;
}

/**
 * Starts the API on config.port, and its internal routes on config.internalPort when set (api/internal-port.ts),
 * once WEBHOOK_SECRETS_REQUIRE_SEALED (when set) finds every stored secret sealed;
 * closing it closes both, then the pool and the Temporal connection (onClose).
 */
export async function startApi(config: Config): Promise<RunningApi> {
  // Started here unless the process runs it already (`start`): whoever starts it shuts it down.
  const tracing = activeTracing() ? undefined : startTracing(config, 'parcel-webhooks-api');
  const fastify = await buildServer({ config });
  try {
    await checkSecretsSealed(fastify.pg, config.webhook.secretEncryptionKeys);
  } catch (err) {
    await fastify.close();
    throw err;
  }
  const address = await fastify.listen({ port: config.port, host: config.host });
  const url = address.replace('0.0.0.0', '127.0.0.1').replace('[::]', '127.0.0.1');
  let internal: Awaited<ReturnType<typeof listenInternal>> | undefined;
  try {
    internal =
      config.internalPort === undefined ? undefined : await listenInternal(fastify, config.internalPort, config.host);
  } catch (err) {
    await fastify.close();
    throw err;
  }
  return {
    url,
    internalUrl: internal?.url ?? url,
    close: async () => {
      await internal?.close();
      await fastify.close();
      await tracing?.shutdown();
    },
  };
}

if (require.main === module) {
  const config = loadConfigOrExit();
  for (const line of unsafeSettingWarnings(config)) process.stderr.write(`${line}\n`);
  const warn = (msg: string) => process.stderr.write(`${msg}\n`);
  Promise.all([startApi(config), serveMetrics({ metrics: config.metrics, warn })]).then(
    ([api, metrics]) => {
      const internal = api.internalUrl === api.url ? '' : `, internal routes on ${api.internalUrl}`;
      process.stdout.write(`api: listening on ${api.url}${internal}${metrics ? `, metrics on ${metrics.url}` : ''}\n`);
      // Graceful: close() stops accepting, lets in-flight requests finish, then runs every onClose hook.
      const shutdown = () => {
        Promise.all([api.close(), metrics?.close()]).then(
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
