import { ApiError } from './errors';

/** Scopes, spec 5.6. */
export const SCOPES = {
  'quotes:read': 'Price a parcel.',
  'network:read': 'Read towns, stations and coverage.',
  'parcels:read': "List and read the account's parcels, and track.",
  'parcels:write': 'Book and cancel parcels.',
  'wallet:read': 'Read the balance and COD settlements.',
  'webhooks:manage': 'Register and remove webhook endpoints.',
} as const;

export type Scope = keyof typeof SCOPES;
export const ALL_SCOPES = Object.keys(SCOPES) as Scope[];

export function isScope(value: string): value is Scope {
  return Object.prototype.hasOwnProperty.call(SCOPES, value);
}

/**
 * The scope each merchant route needs, the one place routes take it from: spec 4's table, plus the routes
 * DESIGN.md and the rotation issue add (webhook list, read, deliveries, secret rotation). The auth plugin reads
 * it when a route is registered; a /v1 route found neither here nor with `config.scope` (test routes) stops the
 * app at start instead of going unprotected.
 */
export const ROUTE_SCOPES: Readonly<Record<string, Scope>> = {
  'GET /v1/towns': 'network:read',
  'POST /v1/webhooks': 'webhooks:manage',
  'GET /v1/webhooks': 'webhooks:manage',
  'GET /v1/webhooks/:id': 'webhooks:manage',
  'DELETE /v1/webhooks/:id': 'webhooks:manage',
  'GET /v1/webhooks/:id/deliveries': 'webhooks:manage',
  'POST /v1/webhooks/:id/secret/rotate': 'webhooks:manage',
};

/** HEAD answers like GET, so it needs what GET needs. */
export function routeScope(method: string, url: string): Scope | undefined {
  const verb = method.toUpperCase() === 'HEAD' ? 'GET' : method.toUpperCase();
  return ROUTE_SCOPES[`${verb} ${url}`];
}

/**
 * `s1,s2` or `all`, as the CLI takes them. Throws a message naming every unknown scope and the valid ones.
 * Duplicates collapse; the result keeps the spec's order so listings read the same everywhere.
 */
export function parseScopes(input: string): Scope[] {
  const parts = input
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '');
  if (parts.length === 0) {
    throw new ApiError('parameter_invalid', `No scopes given: use a comma-separated list of ${ALL_SCOPES.join(', ')}, or all.`, {
      param: 'scopes',
    });
  }
  if (parts.length === 1 && parts[0]?.toLowerCase() === 'all') return [...ALL_SCOPES];
  const unknown = parts.filter((part) => !isScope(part));
  if (unknown.length > 0) {
    const names = unknown.map((part) => JSON.stringify(part)).join(', ');
    throw new ApiError('parameter_invalid', `Unknown scope ${names}: valid scopes are ${ALL_SCOPES.join(', ')}, or all.`, {
      param: 'scopes',
    });
  }
  return ALL_SCOPES.filter((scope) => parts.includes(scope));
}
