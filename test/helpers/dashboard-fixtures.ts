import Fastify, { type FastifyInstance } from 'fastify';
import { EVENT_TYPES as CATALOG_EVENT_TYPES } from '../../src/core/event-catalog';
import { ALL_SCOPES, SCOPES as SCOPE_DESCRIPTIONS } from '../../src/core/scopes';
import { loadAssets } from '../../src/dashboard/assets';
import assetRoutes from '../../src/dashboard/routes/assets';
import { apiVersionViews, eventKindViews } from '../../src/dashboard/routes/event-types';
import { sendPage, setSecurityHeaders } from '../../src/dashboard/security-headers';
import { confirmPage } from '../../src/dashboard/views/confirm';
import { deliveriesPage } from '../../src/dashboard/views/deliveries';
import { ALL_ENDPOINT_FEATURES, endpointPage, endpointsPage } from '../../src/dashboard/views/endpoints';
import { auditLogPage } from '../../src/dashboard/views/audit-log';
import { eventTypesPage } from '../../src/dashboard/views/event-types';
import { AUDIT_ACTIONS } from '../../src/domain/audit-log';
import { eventPage, eventsPage } from '../../src/dashboard/views/events';
import { keysPage } from '../../src/dashboard/views/keys';
import type {
  AccountStatus,
  AttemptView,
  EndpointHealthView,
  EndpointView,
  HourCountsView,
  KeyView,
  Mode,
  PageContext,
} from '../../src/dashboard/views/models';
import { overviewPage } from '../../src/dashboard/views/overview';
import { fillHours, hourWindow, totalsOf } from '../../src/core/delivery-stats';
import { errorPage, signInLinkPage, signInPage } from '../../src/dashboard/views/public';

/**
 * Sample records for rendering every page without a database: the view tests and the layout checks in
 * Chromium use them. The real pages are tested against the real app in test/browser.
 */

export const NOW = new Date('2026-03-02T10:00:00Z');
const at = (iso: string) => Math.floor(new Date(iso).getTime() / 1000);

/** The catalogue's kinds, so the pages show what the product offers. */
export const EVENT_TYPES: string[] = [...CATALOG_EVENT_TYPES];

export const SCOPES = ALL_SCOPES.map((name) => ({ name, description: SCOPE_DESCRIPTIONS[name] }));

export function sampleContext(options: {
  mode?: Mode;
  status?: AccountStatus;
  assets: PageContext['assets'];
}): PageContext {
  return {
    account: { id: 'acct_Fixture0000000000000000', name: 'Duka Letu <Nairobi>', status: options.status ?? 'active' },
    mode: options.mode ?? 'test',
    csrfToken: 'csrf-token-fixture',
    assets: options.assets,
    now: NOW,
  };
}

export const KEYS: KeyView[] = [
  {
    id: 'key_new',
    mode: 'test',
    last4: 'Q7dX',
    scopes: ['parcels:read', 'parcels:write', 'webhooks:manage'],
    description: 'Checkout server (replacement)',
    expires_at: null,
    revoked_at: null,
    last_used_at: '2026-03-02T09:58:30Z',
    created_at: '2026-03-02T09:40:00Z',
  },
  {
    id: 'key_old',
    mode: 'test',
    last4: '3f9A',
    scopes: ['parcels:read', 'parcels:write', 'webhooks:manage'],
    description: '<script>alert("x")</script> checkout',
    expires_at: '2026-12-31T00:00:00Z',
    revoked_at: null,
    last_used_at: '2026-03-01T17:12:00Z',
    created_at: '2025-11-20T08:00:00Z',
  },
  {
    id: 'key_gone',
    mode: 'test',
    last4: 'm2Kp',
    scopes: ['network:read'],
    description: null,
    expires_at: null,
    revoked_at: '2026-01-10T12:00:00Z',
    last_used_at: null,
    created_at: '2025-10-01T08:00:00Z',
  },
];

export const ENDPOINTS: EndpointView[] = [
  {
    id: 'we_shop',
    url: 'https://shop.duka.example/webhooks/parcel',
    events: EVENT_TYPES,
    description: 'Order status updates',
    status: 'enabled',
    livemode: false,
    created: at('2026-02-01T09:00:00Z'),
  },
  {
    id: 'we_ledger',
    url: 'https://ledger.duka.example/cod',
    events: ['cod.settled'],
    description: null,
    status: 'failing',
    livemode: false,
    created: at('2026-02-10T09:00:00Z'),
  },
];

export const ATTEMPTS: AttemptView[] = [
  {
    id: 'dlv_3',
    endpoint_id: 'we_ledger',
    event_id: 'evt_cod1',
    event_type: 'cod.settled',
    attempt: 2,
    trigger: 'resend',
    status_code: 500,
    response_body: '{"error":"database is down"}<b>not bold</b>',
    error: null,
    duration_ms: 184,
    succeeded: false,
    created: at('2026-03-02T09:50:00Z'),
  },
  {
    id: 'dlv_2',
    endpoint_id: 'we_ledger',
    event_id: 'evt_cod1',
    event_type: 'cod.settled',
    attempt: 1,
    trigger: 'automatic',
    status_code: null,
    response_body: null,
    error: 'timeout',
    duration_ms: 10_002,
    succeeded: false,
    created: at('2026-03-02T09:40:00Z'),
  },
  {
    id: 'dlv_1',
    endpoint_id: 'we_shop',
    event_id: 'evt_cod1',
    event_type: 'cod.settled',
    attempt: 1,
    trigger: 'automatic',
    status_code: 200,
    response_body: 'ok',
    error: null,
    duration_ms: 42,
    succeeded: true,
    created: at('2026-03-02T09:40:00Z'),
  },
];

/** A day or a week of attempts, busier in the afternoon, with failures now and then and a few hours without any. */
export function sampleHours(hours: number, seed = 1): HourCountsView[] {
  const found = hourWindow(NOW, hours).map((hour, index) => {
    const wave = Math.round(
      40 + 30 * Math.sin(((hour.getUTCHours() - 6) / 24) * 2 * Math.PI) + ((index * 7 + seed * 13) % 11),
    );
    const quiet = (index + seed) % 17 === 0;
    return {
      hour,
      succeeded: quiet ? 0 : wave,
      failed: quiet ? 0 : (index * seed) % 5 === 0 ? 6 : 1,
      abandoned: quiet ? 0 : (index + seed) % 23 === 0 ? 2 : 0,
    };
  });
  return fillHours(hourWindow(NOW, hours), found);
}

export function sampleHealth(window: '24h' | '7d'): EndpointHealthView {
  const hours = sampleHours(window === '24h' ? 24 : 168);
  return { window, hours, totals: totalsOf(hours), p50Ms: 142, p95Ms: 880 };
}

/** Every page, by a short name, rendered from the samples. */
export function samplePages(assets: PageContext['assets'], options: { mode?: Mode; status?: AccountStatus } = {}) {
  const ctx = sampleContext({ ...options, assets });
  const endpoints = new Map(ENDPOINTS.map((endpoint) => [endpoint.id, endpoint]));
  return {
    'sign-in': () => signInPage({ assets, reason: 'link-invalid' }),
    'sign-in-link': () => signInLinkPage({ assets, action: `/dashboard/sign-in/${'T'.repeat(43)}` }),
    keys: () => keysPage(ctx, { keys: KEYS, scopes: SCOPES }),
    'key-created': () =>
      keysPage(ctx, {
        keys: KEYS,
        scopes: SCOPES,
        created: { key: 'svc_test_4eC39HqLyjWDarjtT1zdp7dcQ7dX', record: KEYS[0] as KeyView },
      }),
    'key-error': () =>
      keysPage(ctx, {
        keys: KEYS,
        scopes: SCOPES,
        error: { message: 'A key needs at least one scope.', param: 'scopes' },
        form: { scopes: [], description: 'x', expires: '' },
      }),
    endpoints: () => endpointsPage(ctx, { endpoints: ENDPOINTS, eventTypes: EVENT_TYPES }),
    endpoint: () =>
      endpointPage(ctx, {
        endpoint: ENDPOINTS[1] as EndpointView,
        eventTypes: EVENT_TYPES,
        features: ALL_ENDPOINT_FEATURES,
        secret: { value: 'whsec_9f8e7d6c5b4a39281706f5e4d3c2b1a0', reason: 'created' },
        notifications: [
          {
            id: 'ntf_1',
            subject: 'Webhook endpoint failing: https://ledger.duka.example/cod',
            body: 'Three deliveries in a row were abandoned.\nFix the receiver, then recover.',
            email_to: 'ops@duka.example',
            email_sent_at: '2026-03-02T08:00:05Z',
            created_at: '2026-03-02T08:00:00Z',
          },
        ],
      }),
    'endpoint-chart': () =>
      endpointPage(ctx, {
        endpoint: ENDPOINTS[0] as EndpointView,
        eventTypes: EVENT_TYPES,
        features: ALL_ENDPOINT_FEATURES,
        notifications: [],
        health: sampleHealth('24h'),
      }),
    'endpoint-chart-week': () =>
      endpointPage(ctx, {
        endpoint: ENDPOINTS[0] as EndpointView,
        eventTypes: EVENT_TYPES,
        features: ALL_ENDPOINT_FEATURES,
        notifications: [],
        health: sampleHealth('7d'),
      }),
    overview: () =>
      overviewPage(ctx, {
        endpoints: ENDPOINTS.map((endpoint, index) => {
          const hours = sampleHours(24, index + 2);
          return { endpoint, hours, totals: totalsOf(hours) };
        }),
      }),
    deliveries: () =>
      deliveriesPage(ctx, {
        endpoint: ENDPOINTS[1] as EndpointView,
        attempts: { data: ATTEMPTS.slice(0, 2), hasMore: true },
      }),
    events: () =>
      eventsPage(ctx, {
        eventTypes: EVENT_TYPES,
        events: {
          data: [
            {
              id: 'evt_cod1',
              type: 'cod.settled',
              created: at('2026-03-02T09:40:00Z'),
              livemode: false,
              pending_webhooks: 1,
              delivery_state: 'retrying',
              parcel_number: 'PN-1001',
            },
            {
              id: 'evt_p1',
              type: 'parcel.delivered',
              created: at('2026-03-02T09:30:00Z'),
              livemode: false,
              pending_webhooks: 0,
              delivery_state: 'delivered',
              parcel_number: 'PCL-104233',
            },
            {
              id: 'evt_p0',
              type: 'parcel.created',
              created: at('2026-03-02T08:30:00Z'),
              livemode: false,
              pending_webhooks: 0,
              delivery_state: 'abandoned',
              parcel_number: 'PCL-104200',
            },
          ],
          hasMore: false,
        },
      }),
    event: () =>
      eventPage(ctx, {
        event: {
          id: 'evt_cod1',
          type: 'cod.settled',
          created: at('2026-03-02T09:40:00Z'),
          livemode: false,
          pending_webhooks: 1,
          data: { cod_settlement: { id: 'cod_1', parcel_number: 'PN-1001', amount: 1500, currency: 'KES' } },
          deliveries: [
            {
              endpoint_id: 'we_shop',
              trigger: 'automatic',
              status: 'succeeded',
              attempts: 1,
              last_status_code: 200,
              last_attempt_at: at('2026-03-02T09:40:00Z'),
            },
            {
              endpoint_id: 'we_ledger',
              trigger: 'resend',
              status: 'pending',
              attempts: 2,
              last_status_code: 500,
              last_attempt_at: at('2026-03-02T09:50:00Z'),
            },
          ],
        },
        endpoints,
        attempts: ATTEMPTS,
        resendTargets: ENDPOINTS,
      }),
    'event-types': () => eventTypesPage(ctx, { kinds: eventKindViews(ENDPOINTS), versions: apiVersionViews() }),
    'audit-log': () =>
      auditLogPage(ctx, {
        actions: AUDIT_ACTIONS,
        entries: {
          hasMore: true,
          data: [
            {
              id: 'aud_3',
              action: 'endpoint.updated',
              actor: { type: 'dashboard', id: 'dss_4f0c2a9e1b7d3c5a6e8f0b1d' },
              target: { type: 'webhook_endpoint', id: 'we_orders' },
              changes: ['url', 'headers'],
              created: at('2026-03-02T09:58:00Z'),
            },
            {
              id: 'aud_2',
              action: 'endpoint.secret_rotated',
              actor: { type: 'api_key', id: 'key_current' },
              target: { type: 'webhook_endpoint', id: 'we_orders' },
              created: at('2026-03-02T09:40:00Z'),
            },
            {
              id: 'aud_1',
              action: 'api_key.created',
              actor: { type: 'cli', id: null },
              target: { type: 'api_key', id: 'key_current' },
              created: at('2026-03-01T16:12:00Z'),
            },
          ],
        },
      }),
    confirm: () =>
      confirmPage(ctx, {
        section: 'keys',
        question: 'Revoke the key ending 3f9A?',
        consequence: 'Every request made with it fails at once with revoked_api_key.',
        action: '/dashboard/test/keys/key_old/revoke',
        confirmLabel: 'Revoke',
        cancelHref: '/dashboard/test/keys',
        danger: true,
      }),
    error: () =>
      errorPage({
        assets,
        title: 'Request refused',
        message: 'This form was sent from another site.',
        code: 'csrf_failed',
      }),
  };
}

export type SamplePage = keyof ReturnType<typeof samplePages>;

/**
 * A bare Fastify serving the sample pages at /preview/<name>?status=&mode= with the dashboard's headers and
 * assets, and echoing form posts as JSON, so the views can be driven in Chromium.
 */
export async function previewServer(): Promise<{ app: FastifyInstance; url: string }> {
  const assets = loadAssets();
  const app = Fastify({ logger: false });
  app.addHook('onSend', async (_request, reply) => setSecurityHeaders(reply));
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) =>
    done(null, Object.fromEntries(new URLSearchParams(body as string))),
  );
  await app.register(assetRoutes, { assets });
  app.get<{ Params: { name: string }; Querystring: { status?: AccountStatus; mode?: Mode } }>(
    '/preview/:name',
    async (request, reply) => {
      const pages = samplePages(assets.urls, request.query);
      const render = pages[request.params.name as SamplePage];
      if (!render) return reply.status(404).send('no such sample');
      return sendPage(reply, render());
    },
  );
  app.post('/dashboard/*', async (request) => ({ url: request.url, body: request.body }));
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  return { app, url };
}
