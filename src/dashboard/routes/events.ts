import type { FastifyInstance } from 'fastify';
import { EVENT_TYPES } from '../../core/event-catalog';
import { listDeliveries } from '../../domain/deliveries';
import { listEndpoints, MAX_ENDPOINTS_PER_MODE } from '../../domain/endpoints';
import { DELIVERY_STATE_FILTERS, getEvent, listEvents, parcelNumberOf } from '../../domain/event-log';
import { resendEvent } from '../../domain/redelivery';
import { errorStatus, formError, optional, type FormBody } from '../forms';
import { notice, pageContext, parseModeParam, type DashboardRouteOptions } from '../context';
import { sendPage } from '../security-headers';
import { eventPage, eventsPage, type EventPageInput } from '../views/events';
import type { AttemptView, FormError, PageContext } from '../views/models';
import { paths } from '../views/paths';
import { scopeOf } from './endpoints';

/** Events of the signed-in account in one mode: the list, one event with every attempt, resend (domain/event-log.ts, domain/redelivery.ts). */

type ModeParams = { Params: { mode: string } };
type EventParams = { Params: { mode: string; id: string } };
const EVENTS_PER_PAGE = 25;
/** Attempts shown per endpoint on an event's page: six per delivery, a few deliveries each. */
const ATTEMPTS_PER_ENDPOINT = 60;

export default async function eventRoutes(app: FastifyInstance, options: DashboardRouteOptions): Promise<void> {
  const hide = { hide: true };
  const deps = () => options.deps();

  app.get<
    ModeParams & { Querystring: { type?: string; delivery_state?: string; q?: string; starting_after?: string } }
  >('/dashboard/:mode/events', { schema: hide, config: { dashboard: 'page' } }, async (request, reply) => {
    const ctx = pageContext(request, options.assets, parseModeParam(request.params.mode));
    const type = request.query.type || undefined;
    const startingAfter = request.query.starting_after || undefined;
    // The select offers only known states; anything else is no filter.
    const state = request.query.delivery_state;
    const deliveryState = state && (DELIVERY_STATE_FILTERS as readonly string[]).includes(state) ? state : undefined;
    // One search box: an event id (evt_...) finds that event, anything else a parcel's id, number or tracking number.
    const q = (request.query.q ?? '').trim().slice(0, 200) || undefined;
    const search = q === undefined ? {} : /^evt_/.test(q) ? { id: q } : { parcel: q };
    const page = await listEvents(deps().pool, scopeOf(ctx), {
      limit: EVENTS_PER_PAGE,
      type,
      startingAfter,
      deliveryState,
      ...search,
    });
    const events = { ...page, data: page.data.map((event) => ({ ...event, parcel_number: parcelNumberOf(event) })) };
    return sendPage(reply, eventsPage(ctx, { events, eventTypes: EVENT_TYPES, type, deliveryState, q, startingAfter }));
  });

  /** The event, its deliveries, every attempt to every endpoint, and where it can be resent. */
  async function renderEvent(ctx: PageContext, id: string, extra: { resent?: string[]; error?: FormError } = {}) {
    const scope = scopeOf(ctx);
    const event = await getEvent(deps().pool, scope, id);
    const endpoints = (await listEndpoints(deps(), scope, { limit: MAX_ENDPOINTS_PER_MODE })).data;
    const byId = new Map(endpoints.map((endpoint) => [endpoint.id, endpoint]));
    const reached = [...new Set(event.deliveries.map((delivery) => delivery.endpoint_id))].filter((endpointId) =>
      byId.has(endpointId),
    );
    const attempts: AttemptView[] = (
      await Promise.all(
        reached.map(
          async (endpointId) =>
            (await listDeliveries(deps(), scope, endpointId, { limit: ATTEMPTS_PER_ENDPOINT, eventId: event.id })).data,
        ),
      )
    )
      .flat()
      .sort((a, b) => b.created - a.created || b.id.localeCompare(a.id));
    const input: EventPageInput = {
      event,
      endpoints: byId,
      attempts,
      // Live endpoints that receive its kind or were sent it; the domain has the last word when resending.
      resendTargets: endpoints.filter(
        (endpoint) =>
          endpoint.status !== 'disabled' && (endpoint.events.includes(event.type) || reached.includes(endpoint.id)),
      ),
      ...extra,
    };
    return eventPage(ctx, input);
  }

  app.get<EventParams>(
    '/dashboard/:mode/events/:id',
    { schema: hide, config: { dashboard: 'page' } },
    async (request, reply) => {
      const ctx = pageContext(request, options.assets, parseModeParam(request.params.mode), {
        notice: notice(request.query),
      });
      return sendPage(reply, await renderEvent(ctx, request.params.id));
    },
  );

  app.post<EventParams>(
    '/dashboard/:mode/events/:id/resend',
    { schema: hide, config: { dashboard: 'action' } },
    async (request, reply) => {
      const mode = parseModeParam(request.params.mode);
      const ctx = pageContext(request, options.assets, mode, { canonical: paths.event(mode, request.params.id) });
      try {
        const resent = await resendEvent(deps(), scopeOf(ctx), request.params.id, {
          endpointId: optional(request.body as FormBody, 'endpoint_id'),
        });
        return sendPage(reply, await renderEvent(ctx, request.params.id, { resent: resent.endpoint_ids }));
      } catch (err) {
        const error = formError(err);
        return sendPage(reply, await renderEvent(ctx, request.params.id, { error }), errorStatus(err));
      }
    },
  );
}
