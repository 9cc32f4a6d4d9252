import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../core/errors';
import { clientErrorHandler } from './errors';

/**
 * The internal routes (publishing, sign-in links) on a port of their own (INTERNAL_PORT), one a deployment
 * does not publish: the parcel system reaches it on the private network, the internet never does. The same
 * Fastify instance answers both ports; the public one answers 404 for the internal routes, the internal one
 * 404 for everything else.
 */

const ARRIVED_ON_INTERNAL_PORT = Symbol('arrivedOnInternalPort');

type MarkedRequest = IncomingMessage & { [ARRIVED_ON_INTERNAL_PORT]?: true };

export function isInternalPath(url: string): boolean {
  const path = url.split('?')[0] as string;
  return path === '/internal' || path.startsWith('/internal/');
}

/** With INTERNAL_PORT set, each port answers only its own routes; unset, every route is on PORT. */
export function gateInternalRoutes(fastify: FastifyInstance, internalPort: number | undefined): void {
  if (internalPort === undefined) return;
  fastify.addHook('onRequest', async (request: FastifyRequest) => {
    const internal = (request.raw as MarkedRequest)[ARRIVED_ON_INTERNAL_PORT] === true;
    if (isInternalPath(request.url) !== internal) {
      throw new ApiError('route_not_found', `Unrecognized request URL (${request.method} ${request.url.split('?')[0]}).`);
    }
  });
}

export interface InternalListener {
  url: string;
  close(): Promise<void>;
}

/** A second HTTP server handing every request to the ready instance's router, marked as internal. */
export async function listenInternal(fastify: FastifyInstance, port: number, host: string): Promise<InternalListener> {
  await fastify.ready();
  const server: Server = createServer((req, res) => {
    (req as MarkedRequest)[ARRIVED_ON_INTERNAL_PORT] = true;
    fastify.routing(req, res);
  });
  server.on('clientError', clientErrorHandler);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const shown = ['0.0.0.0', '::'].includes(address.address) ? '127.0.0.1' : address.address;
  return {
    url: `http://${shown.includes(':') ? `[${shown}]` : shown}:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}
