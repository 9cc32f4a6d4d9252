import type { Mode, Section } from './models';

/**
 * Every URL of the page, in one place for the views and the routes. The mode is part of the path
 * (`/dashboard/test/...`), so a link or a bookmark always says which data it shows and switching mode needs
 * no state on the server.
 */
export const DASHBOARD = '/dashboard';
export const ASSETS = `${DASHBOARD}/assets`;

const seg = (value: string) => encodeURIComponent(value);

export const paths = {
  home: DASHBOARD,
  signIn: `${DASHBOARD}/sign-in`,
  signInLink: (token: string) => `${DASHBOARD}/sign-in/${seg(token)}`,
  signOut: `${DASHBOARD}/sign-out`,
  signOutEverywhere: `${DASHBOARD}/sign-out-everywhere`,
  section: (mode: Mode, section: Section) => `${DASHBOARD}/${mode}/${section}`,
  keys: (mode: Mode) => `${DASHBOARD}/${mode}/keys`,
  revokeKey: (mode: Mode, id: string) => `${DASHBOARD}/${mode}/keys/${seg(id)}/revoke`,
  endpoints: (mode: Mode) => `${DASHBOARD}/${mode}/endpoints`,
  endpoint: (mode: Mode, id: string) => `${DASHBOARD}/${mode}/endpoints/${seg(id)}`,
  endpointAction: (mode: Mode, id: string, action: EndpointAction) =>
    `${DASHBOARD}/${mode}/endpoints/${seg(id)}/${action}`,
  deliveries: (mode: Mode, id: string, query: { outcome?: string; startingAfter?: string } = {}) =>
    withQuery(`${DASHBOARD}/${mode}/endpoints/${seg(id)}/deliveries`, {
      outcome: query.outcome,
      starting_after: query.startingAfter,
    }),
  events: (mode: Mode, query: { type?: string; startingAfter?: string } = {}) =>
    withQuery(`${DASHBOARD}/${mode}/events`, { type: query.type, starting_after: query.startingAfter }),
  event: (mode: Mode, id: string) => `${DASHBOARD}/${mode}/events/${seg(id)}`,
  resend: (mode: Mode, id: string) => `${DASHBOARD}/${mode}/events/${seg(id)}/resend`,
  eventTypes: (mode: Mode) => `${DASHBOARD}/${mode}/event-types`,
  eventTypesTest: (mode: Mode) => `${DASHBOARD}/${mode}/event-types/test`,
};

export type EndpointAction = 'update' | 'disable' | 'enable' | 'rotate' | 'delete' | 'test' | 'recover';

export function withQuery(path: string, query: Record<string, string | undefined>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value) params.set(name, value);
  const text = params.toString();
  return text ? `${path}?${text}` : path;
}
