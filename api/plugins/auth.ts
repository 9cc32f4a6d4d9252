import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify';
import fp from 'fastify-plugin';
import { ApiError } from '../../core/errors';
import { isScope, routeScope, type Scope } from '../../core/scopes';
import type { Pool } from '../../db/pool';
import { verifyApiKey, type KeyContext } from '../../domain/api-keys';

export type AuthContext = KeyContext;

declare module 'fastify' {
  interface FastifyRequest {
    auth?: AuthContext;
    /** Why authentication failed; thrown once rate limiting has counted the request. */
    authError?: ApiError;
  }
  interface FastifyContextConfig {
    /** The scope a route needs (spec 5.6); routes without it are public (health, docs). */
    scope?: Scope;
  }
}

/** Basic of the longest key plus its scheme; a longer header cannot hold a key, so it is not parsed. */
const MAX_AUTHORIZATION_LENGTH = 256;

const MALFORMED_HEADER =
  'The Authorization header is not shaped like an API key: use "Bearer <API_KEY>", or Basic with the key as username and an empty password.';

function malformed(message = MALFORMED_HEADER): ApiError {
  return new ApiError('malformed_api_key', message);
}

/** Spec 5.2: `Bearer <key>` or HTTP Basic with the key as username and an empty password. */
export function presentedKey(header: string | undefined): string {
  if (header === undefined || header.trim() === '') {
    throw new ApiError('missing_api_key', 'No API key provided. Send it as "Authorization: Bearer <API_KEY>".');
  }
  if (header.length > MAX_AUTHORIZATION_LENGTH) throw malformed();
  const trimmed = header.trim();
  const space = trimmed.search(/\s/);
  if (space < 0) throw malformed();
  const scheme = trimmed.slice(0, space).toLowerCase();
  const credentials = trimmed.slice(space).trim();
  if (credentials === '' || /\s/.test(credentials)) throw malformed();
  if (scheme === 'bearer') return credentials;
  if (scheme === 'basic') {
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(credentials)) throw malformed();
    const decoded = Buffer.from(credentials, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) throw malformed();
    if (decoded.slice(colon + 1) !== '') {
      throw malformed('HTTP Basic takes the API key as the username and an empty password; a password was sent.');
    }
    return decoded.slice(0, colon);
  }
  throw malformed();
}

/** The caller behind an Authorization header (spec 5.2), verified by domain/api-keys.ts. */
export async function authenticate(pool: Pool, header: string | undefined, now = new Date()): Promise<AuthContext> {
  return verifyApiKey(pool, presentedKey(header), now);
}

export function requireScope(auth: AuthContext, scope: Scope): void {
  if (!auth.scopes.includes(scope)) {
    throw new ApiError('insufficient_scope', `This API key lacks the scope ${scope} needed for this call.`, { scope });
  }
}

/** The authenticated context of a route that declared a scope. */
export function authOf(request: FastifyRequest): AuthContext {
  if (!request.auth) throw new Error('route has no scope configured, so it is not authenticated');
  return request.auth;
}

/** Settles a route's scope from core/scopes.ts and its own config; a /v1 route with none fails closed. */
function resolveRouteScope(route: RouteOptions): void {
  const methods = Array.isArray(route.method) ? route.method : [route.method];
  const fromTable = new Set(methods.map((method) => routeScope(method, route.url)).filter((s) => s !== undefined));
  const declared = route.config?.scope;
  if (declared !== undefined && !isScope(declared)) throw new Error(`route ${route.url}: unknown scope ${declared}`);
  if (fromTable.size > 1) throw new Error(`route ${route.url}: its methods need different scopes; register them apart`);
  const tabled = [...fromTable][0];
  if (declared && tabled && declared !== tabled) {
    throw new Error(`route ${route.url}: config.scope ${declared} disagrees with core/scopes.ts (${tabled})`);
  }
  const scope = declared ?? tabled;
  if (!scope && /^\/v1(\/|$)/.test(route.url)) {
    throw new Error(`route ${methods.join(',')} ${route.url} has no scope: add it to ROUTE_SCOPES or set config.scope`);
  }
  if (scope) route.config = { ...route.config, scope };
}

async function authPlugin(app: FastifyInstance, options: { pool: Pool; now?: () => Date }): Promise<void> {
  const now = options.now ?? (() => new Date());
  app.decorateRequest('auth', undefined);
  app.decorateRequest('authError', undefined);
  app.addHook('onRoute', resolveRouteScope);
  // Identify in onRequest so the rate limiter (a route-level onRequest hook, so after this one) can count
  // per key; the verdict is delivered in preParsing, still before any body is read.
  app.addHook('onRequest', async (request) => {
    if (!request.routeOptions.config.scope) return;
    try {
      request.auth = await authenticate(options.pool, request.headers.authorization, now());
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      request.authError = err;
    }
  });
  app.addHook('preParsing', async (request) => {
    const scope = request.routeOptions.config.scope;
    if (!scope) return;
    if (request.authError) throw request.authError;
    requireScope(authOf(request), scope);
  });
}

export default fp(authPlugin, { name: 'auth' });
