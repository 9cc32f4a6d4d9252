import type { FastifyInstance } from 'fastify';
import { eventCatalog } from '../../core/event-schemas';
import { API_VERSIONS, LATEST_API_VERSION, olderRenderings } from '../../core/versions';
import { listEndpoints, MAX_ENDPOINTS_PER_MODE } from '../../domain/endpoints';
import { sendTestEvent } from '../../domain/redelivery';
import { pageContext, parseModeParam, type DashboardRouteOptions } from '../context';
import { errorStatus, formError, optional, type FormBody } from '../forms';
import { sendPage } from '../security-headers';
import {
  eventTypesPage,
  type ApiVersionView,
  type EventKindView,
  type EventTypesPageInput,
} from '../views/event-types';
import type { EndpointView, PageContext } from '../views/models';
import { paths } from '../views/paths';
import { scopeOf } from './endpoints';

/**
 * The event catalog: each kind, when it fires, its body's JSON Schema and an example (core/event-schemas.ts), and
 * "Send test event" to an endpoint of this mode, through the same domain function as the endpoint page's button.
 */

type ModeParams = { Params: { mode: string } };

const pretty = (value: unknown) => JSON.stringify(value, null, 2);

/** Every kind as the page shows it, with the endpoints (of the page's mode) a test event of it can go to. */
export function eventKindViews(
  endpoints: readonly Pick<EndpointView, 'id' | 'url' | 'status' | 'events'>[],
): EventKindView[] {
  return eventCatalog().map((entry) => ({
    type: entry.type,
    firesWhen: entry.firesWhen,
    carries: entry.carries,
    schemaJson: pretty(entry.schema),
    exampleJson: pretty(entry.example),
    olderVersions: olderRenderings(entry.type).map((older) => ({
      version: older.version,
      differences: older.differences,
      schemaJson: pretty(older.schema),
      exampleJson: pretty(older.example),
    })),
    // Live endpoints subscribed to the kind, as the endpoint page offers its own subscribed kinds.
    targets: endpoints.filter((endpoint) => endpoint.status !== 'disabled' && endpoint.events.includes(entry.type)),
  }));
}

/** The API versions, newest first, as the page lists them (core/versions). */
export function apiVersionViews(): ApiVersionView[] {
  return API_VERSIONS.map((version) => ({
    name: version.name,
    latest: version.name === LATEST_API_VERSION,
    why: version.why,
    changes: version.changes.map((change) => ({ type: change.type, summary: change.summary })),
    sunset: version.sunset,
  }));
}

export default async function eventTypeRoutes(app: FastifyInstance, options: DashboardRouteOptions): Promise<void> {
  const hide = { hide: true };

  async function render(ctx: PageContext, error?: EventTypesPageInput['error']) {
    const endpoints = (await listEndpoints(options.deps(), scopeOf(ctx), { limit: MAX_ENDPOINTS_PER_MODE })).data;
    return eventTypesPage(ctx, { kinds: eventKindViews(endpoints), versions: apiVersionViews(), error });
  }

  app.get<ModeParams>(
    '/dashboard/:mode/event-types',
    { schema: hide, config: { dashboard: 'page' } },
    async (request, reply) => {
      const ctx = pageContext(request, options.assets, parseModeParam(request.params.mode));
      return sendPage(reply, await render(ctx));
    },
  );

  app.post<ModeParams>(
    '/dashboard/:mode/event-types/test',
    { schema: hide, config: { dashboard: 'action' } },
    async (request, reply) => {
      const mode = parseModeParam(request.params.mode);
      const ctx = pageContext(request, options.assets, mode, { canonical: paths.eventTypes(mode) });
      const body = request.body as FormBody;
      const type = optional(body, 'type') ?? '';
      try {
        const event = await sendTestEvent(options.deps(), scopeOf(ctx), optional(body, 'endpoint_id') ?? '', { type });
        return reply.redirect(`${paths.event(mode, event.id)}?notice=test_sent`, 303);
      } catch (err) {
        return sendPage(reply, await render(ctx, { type, error: formError(err) }), errorStatus(err));
      }
    },
  );
}
