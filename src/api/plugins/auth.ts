import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify';
import fp from 'fastify-plugin';
import { ApiError } from '../../core/errors';
import { isScope, type Scope } from '../../core/scopes';
import type { Pool } from '../../db/pool';
import { verifyApiKey, type KeyContext } from '../../domain/api-keys';
import { apiKeyActor, type AuditActor } from '../../domain/audit-log';
import { CredentialFailures } from '../../infra/credential-failures';
import { clientLimitKey } from '../../infra/client-address';

export type AuthContext = KeyContext;

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * The caller behind a request's Authorization header, unless its client address already presented too many
     * bad keys this minute (then rate_limited, with no lookup); also used where no route matched (api/errors.ts).
     */
    identify(request: FastifyRequest): Promise<AuthContext>;
  }
  interface FastifyRequest {
    auth?: AuthContext;
    /** Why authentication failed; thrown once rate limiting has counted the request. */
    authError?: ApiError;
  }
  interface FastifyContextConfig {
    /** The scope a route needs, declared beside the route; routes without it are public (health, docs). */
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

/** `Bearer <key>` or HTTP Basic with the key as username and an empty password. */
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

/** The caller behind an Authorization header, verified by domain/api-keys.ts. */
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

/** Who the audit log says made a change through this request: its API key. */
export function actorOf(request: FastifyRequest): AuditActor {
  return apiKeyActor(authOf(request).keyId);
}

/** A route's scope is declared beside it (`config: { scope }`), the one source; a /v1 route without one fails closed. */
function checkRouteScope(route: RouteOptions): void {
  const scope = route.config?.scope;
  if (scope !== undefined && !isScope(scope)) throw new Error(`route ${route.url}: unknown scope ${String(scope)}`);
  if (scope === undefined && /^\/v1(\/|$)/.test(route.url)) {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    throw new Error(`route ${methods.join(',')} ${route.url} has no scope: set config.scope beside it`);
  }
}

async function authPlugin(fastify: FastifyInstance, options: { now?: () => Date }): Promise<void> {
  const now = options.now ?? (() => new Date());
  // As many bad keys a minute as API_RATE_LIMIT_PER_MINUTE allows requests: the per-client budget, spent on
  // failures before they reach the database rather than counted after each lookup.
  const failures = new CredentialFailures(fastify.config.rateLimitPerMinute, 60_000, 'API keys');
  fastify.decorate('identify', async (request: FastifyRequest) => {
    failures.check(clientLimitKey(request.ip));
    try {
      return await authenticate(fastify.pg, request.headers.authorization, now());
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) failures.record(clientLimitKey(request.ip));
      throw err;
    }
  });
  fastify.decorateRequest('auth', undefined);
  fastify.decorateRequest('authError', undefined);
  fastify.addHook('onRoute', checkRouteScope);
  // Identify in onRequest so the rate limiter (a route-level onRequest hook, so after this one) can count
  // per key; the verdict is delivered in preParsing, still before any body is read. A client refused for its
  // bad keys is answered at once.
  fastify.addHook('onRequest', async (request) => {
    if (!request.routeOptions.config.scope) return;
    try {
      request.auth = await fastify.identify(request);
    } catch (err) {
      if (!(err instanceof ApiError) || err.code === 'rate_limited') throw err;
      request.authError = err;
    }
  });
  fastify.addHook('preParsing', async (request) => {
    const scope = request.routeOptions.config.scope;
    if (!scope) return;
    if (request.authError) throw request.authError;
    requireScope(authOf(request), scope);
  });
}

export default fp(authPlugin, { name: 'auth', dependencies: ['config', 'pg'] });
