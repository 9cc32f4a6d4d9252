import { ApiError } from './errors';

/** The scopes an API key can hold, each with what it allows. */
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
 * `s1,s2` or `all`, as the CLI takes them. Throws a message naming every unknown scope and the valid ones.
 * Duplicates collapse; the result keeps SCOPES' order so listings read the same everywhere.
 */
export function parseScopes(input: string): Scope[] {
  const parts = input
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '');
  if (parts.length === 0) {
    throw new ApiError(
      'parameter_invalid',
      `No scopes given: use a comma-separated list of ${ALL_SCOPES.join(', ')}, or all.`,
      {
        param: 'scopes',
      },
    );
  }
  if (parts.length === 1 && parts[0]?.toLowerCase() === 'all') return [...ALL_SCOPES];
  const unknown = parts.filter((part) => !isScope(part));
  if (unknown.length > 0) {
    const names = unknown.map((part) => JSON.stringify(part)).join(', ');
    throw new ApiError(
      'parameter_invalid',
      `Unknown scope ${names}: valid scopes are ${ALL_SCOPES.join(', ')}, or all.`,
      {
        param: 'scopes',
      },
    );
  }
  return ALL_SCOPES.filter((scope) => parts.includes(scope));
}
