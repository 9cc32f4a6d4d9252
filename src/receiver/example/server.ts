import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyError, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { Pool } from 'pg';
// A merchant writes `from 'parcel-webhooks/receiver'`; inside this repo the example uses the source directly.
import {
  constructEvent,
  DELIVERY_ID_HEADER,
  SIGNATURE_HEADER,
  WebhookVerificationError,
  type VerifyOptions,
  type ParcelEvent,
} from '../index';
import { EventProcessor, type EventHandler, type ProcessorHooks } from './processor';
import { ensureEventsTable, storeEvent } from './store';

export const WEBHOOK_PATH = '/webhooks';

export interface ReceiverOptions {
  pool: Pool;
  /** One secret, or old and new during a rotation. */
  secrets: string | readonly string[];
  /** The slow work, run after the reply; see EventHandler. Defaults to doing nothing beyond marking processed. */
  onEvent?: EventHandler;
  /** Called when queued work for an event ends (a hook for tests and metrics). */
  onProcessed?: ProcessorHooks['onSettled'];
  /** Passed to the verifier; tests inject `now`. */
  verify?: VerifyOptions;
  https?: { cert: string | Buffer; key: string | Buffer };
  logger?: FastifyServerOptions['logger'];
}

export interface Receiver {
  app: FastifyInstance;
  processor: EventProcessor;
  /** Starts listening; port 0 picks a free port. Resolves to the webhook URL. */
  listen(port?: number, host?: string): Promise<string>;
  /** Stops accepting requests, then waits for work already accepted. */
  close(): Promise<void>;
}

interface ErrorBody {
  error: { code: string; message: string };
}

function errorBody(code: string, message: string): ErrorBody {
  return { error: { code, message } };
}

export async function buildReceiver(options: ReceiverOptions): Promise<Receiver> {
  await ensureEventsTable(options.pool);
  const handler: EventHandler = options.onEvent ?? (async () => undefined);
  // Fastify's types tie the server kind to the options at compile time; at run time `https` alone decides.
  const app = Fastify({
    logger: options.logger ?? false,
    ...(options.https ? { https: options.https } : {}),
  } as FastifyServerOptions);
  const processor = new EventProcessor(options.pool, handler, {
    onError: (err, eventId) =>
      app.log.error(
        { err, eventId },
        'processing a stored webhook event failed; it stays unprocessed for processPending()',
      ),
    ...(options.onProcessed ? { onSettled: options.onProcessed } : {}),
  });

  // Bad input gets a small 4xx JSON body; only our own failures are 5xx, and those say nothing internal.
  app.setErrorHandler((err: FastifyError, request, reply) => {
    const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 600 ? err.statusCode : 500;
    if (status >= 500) {
      request.log.error({ err }, 'webhook receiver error');
      return reply.code(status).send(errorBody('internal_error', 'internal error'));
    }
    const code = status === 415 ? 'unsupported_media_type' : status === 413 ? 'body_too_large' : 'bad_request';
    return reply.code(status).send(errorBody(code, err.message));
  });

  await app.register(async (scope) => {
    // The signature covers the bytes as sent: keep them, and parse JSON only after verifying.
    // Only JSON is ever sent; any other type is refused (415) rather than read as an empty body.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));

    scope.post(WEBHOOK_PATH, async (request, reply) => {
      const rawBody = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      const deliveryHeader = request.headers[DELIVERY_ID_HEADER];
      let event: ParcelEvent;
      try {
        event = constructEvent(rawBody, request.headers[SIGNATURE_HEADER], options.secrets, options.verify);
      } catch (err) {
        if (!(err instanceof WebhookVerificationError)) throw err;
        request.log.warn({ reason: err.reason, delivery: deliveryHeader }, 'webhook rejected');
        return reply.code(400).send(errorBody(err.reason, err.message));
      }

      let isNew: boolean;
      try {
        isNew = await storeEvent(
          options.pool,
          event,
          rawBody.toString('utf8'),
          typeof deliveryHeader === 'string' ? deliveryHeader : undefined,
        );
      } catch (err) {
        // Not stored means not acknowledged: a 503 makes the service retry later.
        request.log.error({ err, eventId: event.id }, 'storing a webhook event failed');
        return reply.code(503).send(errorBody('storage_unavailable', 'event not stored; retry later'));
      }
      // Enqueued even for a duplicate: if earlier processing failed, the retry gets it done; if it succeeded,
      // processing finds the row already marked and does nothing.
      // 'close' follows the last byte of the reply (or an aborted one): the work never delays the 2xx.
      reply.raw.once('close', () => processor.enqueue(event.id));
      return reply.code(200).send({ received: true, duplicate: !isNew });
    });
  });

  app.addHook('onClose', async () => {
    await processor.drain();
  });

  return {
    app,
    processor,
    async listen(port = 0, host = '127.0.0.1') {
      await app.listen({ port, host });
      const address = app.server.address() as AddressInfo;
      const hostPart = address.family === 'IPv6' ? `[${address.address}]` : address.address;
      return `${options.https ? 'https' : 'http'}://${hostPart}:${address.port}${WEBHOOK_PATH}`;
    },
    close: () => app.close(),
  };
}
