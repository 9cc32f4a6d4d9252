import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { API_KEY_PATTERN, hashApiKey } from '../../core/api-keys';
import { ApiError } from '../../core/errors';
import type { Scope } from '../../core/scopes';
import { findKeyForAuth, touchKeyLastUsed } from '../../db/api-keys';
import type { Pool } from '../../db/pool';

export interface AuthContext {
  keyId: string;
  accountId: string;
  livemode: boolean;
  scopes: string[];
}

declare module 'fastify' {
  interface FastifyRequest {
    auth?: AuthContext;
  }
  interface FastifyContextConfig {
    /** The scope a route needs (spec 5.6); routes without it are public (health, docs). */
    scope?: Scope;
  }
}

const LAST_USED_RESOLUTION_MS = 60_000;

/** Spec 5.2: `Bearer <key>` or HTTP Basic with the key as username and an empty password. */
export function presentedKey(header: string | undefined): string {
  if (header === undefined || header.trim() === '') {
    throw new ApiError('missing_api_key', 'No API key provided. Send it as "Authorization: Bearer <API_KEY>".');
  }
  const match = /^(\S+)\s+(\S+)\s*$/.exec(header);
  const scheme = match?.[1]?.toLowerCase();
  if (match && scheme === 'bearer') return match[2] as string;
  if (match && scheme === 'basic') {
    const decoded = Buffer.from(match[2] as string, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon >= 0 && decoded.slice(colon + 1) === '') return decoded.slice(0, colon);
  }
  throw new ApiError(
    'malformed_api_key',
    'The Authorization header is not shaped like an API key: use "Bearer <API_KEY>" or Basic with the key as username and an empty password.',
  );
}

export async function authenticate(pool: Pool, header: string | undefined, now = new Date()): Promise<AuthContext> {
  const key = presentedKey(header);
  if (!API_KEY_PATTERN.test(key)) {
    throw new ApiError('malformed_api_key', 'The API key is not shaped like a key (svc_test_... or svc_live_...); check for a truncated paste.');
  }
  const found = await findKeyForAuth(pool, hashApiKey(key));
  if (!found) throw new ApiError('invalid_api_key', 'Invalid API key provided.');
  if (found.revoked_at) throw new ApiError('revoked_api_key', 'This API key has been revoked.');
  if (found.expires_at && found.expires_at.getTime() <= now.getTime()) {
    throw new ApiError('expired_api_key', 'This API key has expired.');
  }
  if (found.account_status === 'suspended') throw new ApiError('client_suspended', 'This account is suspended.');
  if (found.mode === 'live' && found.account_status !== 'active') {
    throw new ApiError('client_not_active', 'Live keys work once the account is approved; test keys work now.');
  }
  if (!found.last_used_at || now.getTime() - found.last_used_at.getTime() >= LAST_USED_RESOLUTION_MS) {
    // Not awaited: the indicator is advisory and must not slow or fail the request.
    touchKeyLastUsed(pool, found.id).catch(() => undefined);
  }
  return { keyId: found.id, accountId: found.account_id, livemode: found.mode === 'live', scopes: found.scopes };
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

async function authPlugin(app: FastifyInstance, options: { pool: Pool }): Promise<void> {
  app.decorateRequest('auth', undefined);
  // onRequest: authentication answers before body parsing and validation do.
  app.addHook('onRequest', async (request) => {
    const scope = request.routeOptions.config.scope;
    if (!scope) return;
    const auth = await authenticate(options.pool, request.headers.authorization);
    request.auth = auth;
    requireScope(auth, scope);
  });
}

export default fp(authPlugin, { name: 'auth' });
