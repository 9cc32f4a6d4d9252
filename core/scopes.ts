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
