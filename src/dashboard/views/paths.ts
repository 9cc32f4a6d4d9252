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
  section: (mode: Mode, section: Section) =>
    section === 'overview' ? `${DASHBOARD}/${mode}` : `${DASHBOARD}/${mode}/${section}`,
  /** The home page of a mode: every endpoint's last day. */
  overview: (mode: Mode) => `${DASHBOARD}/${mode}`,
  keys: (mode: Mode) => `${DASHBOARD}/${mode}/keys`,
  revokeKey: (mode: Mode, id: string) => `${DASHBOARD}/${mode}/keys/${seg(id)}/revoke`,
  endpoints: (mode: Mode) => `${DASHBOARD}/${mode}/endpoints`,
  endpoint: (mode: Mode, id: string, query: { window?: string } = {}) =>
    withQuery(`${DASHBOARD}/${mode}/endpoints/${seg(id)}`, { window: query.window }),
  endpointAction: (mode: Mode, id: string, action: EndpointAction) =>
    `${DASHBOARD}/${mode}/endpoints/${seg(id)}/${action}`,
  deliveries: (mode: Mode, id: string, query: { outcome?: string; startingAfter?: string } = {}) =>
    withQuery(`${DASHBOARD}/${mode}/endpoints/${seg(id)}/deliveries`, {
      outcome: query.outcome,
      starting_after: query.startingAfter,
    }),
  events: (mode: Mode, query: EventsQuery = {}) =>
    withQuery(`${DASHBOARD}/${mode}/events`, {
      type: query.type,
      delivery_state: query.deliveryState,
      q: query.q,
      starting_after: query.startingAfter,
    }),
  event: (mode: Mode, id: string) => `${DASHBOARD}/${mode}/events/${seg(id)}`,
  resend: (mode: Mode, id: string) => `${DASHBOARD}/${mode}/events/${seg(id)}/resend`,
  eventTypes: (mode: Mode) => `${DASHBOARD}/${mode}/event-types`,
  eventTypesTest: (mode: Mode) => `${DASHBOARD}/${mode}/event-types/test`,
  auditLog: (mode: Mode, query: { action?: string; startingAfter?: string } = {}) =>
    withQuery(`${DASHBOARD}/${mode}/audit-log`, { action: query.action, starting_after: query.startingAfter }),
};

/** The events list's filters: kind, delivery state, and an event or parcel to find. */
export interface EventsQuery {
  type?: string;
  deliveryState?: string;
  q?: string;
  startingAfter?: string;
}

export type EndpointAction =
  'update' | 'disable' | 'enable' | 'pause' | 'resume' | 'rotate' | 'delete' | 'test' | 'recover';

export function withQuery(path: string, query: Record<string, string | undefined>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value) params.set(name, value);
  const text = params.toString();
  return text ? `${path}?${text}` : path;
}
