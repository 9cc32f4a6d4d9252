import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify';
import { clientErrorHandler, CONNECTIONS_CHECK_MS, routeNotFound } from './errors';

/**
 * The internal routes (publishing, sign-in links) on a port of their own (INTERNAL_PORT), one a deployment
 * does not publish: the parcel system reaches it on the private network, the internet never does. The same
 * Fastify instance answers both ports; the public one answers 404 for the internal routes, the internal one
 * 404 for everything else.
 */

declare module 'fastify' {
  interface FastifyContextConfig {
    /** An internal route (publishing, sign-in links): with INTERNAL_PORT set it answers there and nowhere else. */
    internal?: boolean;
  }
}

const ARRIVED_ON_INTERNAL_PORT = Symbol('arrivedOnInternalPort');

type MarkedRequest = IncomingMessage & { [ARRIVED_ON_INTERNAL_PORT]?: true };

/** Where internal routes are registered; a route's own pattern, never a URL as a client spelled it. */
function isInternalRoutePath(path: string): boolean {
  return path === '/internal' || path.startsWith('/internal/');
}

/** Every route under /internal declares `config: { internal: true }` and no other route does: fails at start. */
function checkRouteSide(route: RouteOptions): void {
  if ((route.config?.internal === true) === isInternalRoutePath(route.url)) return;
  throw new Error(`route ${route.url}: config.internal must be true exactly for routes under /internal`);
}

/**
 * With INTERNAL_PORT set, each port answers only its own routes; unset, every route is on PORT. The route the
 * router matched decides, never the URL as sent: the router decodes percent-escapes (`/%69nternal`) before
 * matching, so a test of the raw URL and the router could disagree about which route a request reaches.
 */
export function gateInternalRoutes(fastify: FastifyInstance, internalPort: number | undefined): void {
  fastify.addHook('onRoute', checkRouteSide);
  if (internalPort === undefined) return;
  fastify.addHook('onRequest', async (request: FastifyRequest) => {
    const arrivedInternal = (request.raw as MarkedRequest)[ARRIVED_ON_INTERNAL_PORT] === true;
    // No route matched: the public port's not-found handler answers; the internal port answers at once.
    if (request.is404) {
      if (arrivedInternal) throw routeNotFound(request);
      return;
    }
    if ((request.routeOptions.config.internal === true) !== arrivedInternal) throw routeNotFound(request);
  });
}

export interface InternalListener {
  url: string;
  close(): Promise<void>;
}

/** A second HTTP server handing every request to the ready instance's router, marked as internal. */
export async function listenInternal(fastify: FastifyInstance, port: number, host: string): Promise<InternalListener> {
  await fastify.ready();
  // The main server's limits on a slow client, so the internal port is no easier to hold open.
  const limits = {
    requestTimeout: fastify.server.requestTimeout,
    headersTimeout: fastify.server.headersTimeout,
    connectionsCheckingInterval: CONNECTIONS_CHECK_MS,
  };
  const server: Server = createServer(limits, (req, res) => {
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
