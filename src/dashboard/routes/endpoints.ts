import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { FORM_SETTINGS, formSpec, type FormSettingName } from '../../core/endpoint-settings';
import { ApiError } from '../../core/errors';
import { EVENT_TYPES } from '../../core/event-catalog';
import { listDeliveries } from '../../domain/deliveries';
import { endpointHealth, isChartWindow, type ChartWindow } from '../../domain/delivery-stats';
import { isHiddenHeader } from '../../domain/endpoint-headers';
import {
  deleteEndpoint,
  getEndpoint,
  listEndpoints,
  MAX_ENDPOINTS_PER_MODE,
  registerEndpoint,
  rotateEndpointSecret,
  updateEndpoint,
  type EndpointDeps,
  type EndpointRecord,
  type RegisterInput,
  type UpdateInput,
} from '../../domain/endpoints';
import { pauseEndpoint, resumeEndpoint } from '../../domain/endpoint-lifecycle';
import { listNotificationsForEndpoint } from '../../domain/notifications';
import { recoverEndpoint, sendTestEvent } from '../../domain/redelivery';
import { errorStatus, formError, list, optional, text, utcSeconds, type FormBody } from '../forms';
import { actorOf, FEATURES, notice, pageContext, parseModeParam, type DashboardRouteOptions } from '../context';
import { sendPage } from '../security-headers';
import { confirmPage } from '../views/confirm';
import { deliveriesPage } from '../views/deliveries';
import {
  endpointPage,
  endpointsPage,
  type EndpointFormValues,
  type EndpointPageInput,
  type EndpointsPageInput,
} from '../views/endpoints';
import type { Mode, PageContext } from '../views/models';
import { paths } from '../views/paths';

/** Webhook endpoints of the signed-in account in one mode (domain/endpoints.ts, domain/deliveries.ts). */

type ModeParams = { Params: { mode: string } };
type EndpointParams = { Params: { mode: string; id: string } };
const DELIVERIES_PER_PAGE = 20;

export function scopeOf(ctx: PageContext) {
  return { accountId: ctx.account.id, livemode: ctx.mode === 'live' };
}

/** The rate limit field: empty is no limit; anything but digits is passed on as NaN for the domain to refuse. */
function rateLimitOf(raw: string): number | null {
  const value = raw.trim();
  if (value === '') return null;
  return /^\d+$/.test(value) ? Number(value) : Number.NaN;
}

/** The headers field: "Name: value" lines; "Name:" removes; a line without a colon is passed on for the domain to refuse. */
function headersOf(raw: string): Record<string, string | null> | undefined {
  const lines = raw
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '');
  if (lines.length === 0) return undefined;
  const change: Record<string, string | null> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    const name = colon < 0 ? line : line.slice(0, colon).trim();
    const value = colon < 0 ? '' : line.slice(colon + 1).trim();
    change[name] = value === '' ? null : value;
  }
  return change;
}

/**
 * The headers field as a refused form brings it back: lines setting a hidden header's value are left out, so a
 * credential never appears in a page (the merchant enters it again); removals ("Name:") and the rest stay.
 */
function headersShownAgain(raw: string): string {
  return raw
    .split(/\r?\n/)
    .filter((line) => {
      const colon = line.indexOf(':');
      return colon < 0 || line.slice(colon + 1).trim() === '' || !isHiddenHeader(line.slice(0, colon).trim());
    })
    .join('\n');
}

/** What one form field holds as typed, and what the domain takes from it (undefined: not given). */
interface FieldRead {
  value: string | string[] | boolean | undefined;
  input: unknown;
}

/** How each input kind is read (core/endpoint-settings.ts: page.form.input); a setting may read its own way (below). */
function readField(body: FormBody, name: FormSettingName): FieldRead {
  const spec = formSpec(name);
  switch (spec.input) {
    case 'url': {
      const value = text(body, name).trim();
      return { value, input: value };
    }
    case 'checkboxes': {
      const value = list(body, name);
      return { value, input: value.length ? value : undefined };
    }
    case 'checkbox': {
      const value = list(body, name).includes(spec.checked ?? 'on');
      return { value, input: value ? spec.checked : spec.unchecked };
    }
    case 'select':
      return { value: optional(body, name), input: optional(body, name) };
    default:
      return { value: text(body, name), input: optional(body, name) };
  }
}

/** The fields read their own way: the rate limit's number, the headers' lines (credentials never shown again). */
const OWN_READS: Partial<Record<FormSettingName, (body: FormBody) => FieldRead>> = {
  rate_limit: (body) => ({ value: text(body, 'rate_limit'), input: rateLimitOf(text(body, 'rate_limit')) }),
  headers: (body) => ({ value: headersShownAgain(text(body, 'headers')), input: headersOf(text(body, 'headers')) }),
};

/** What the endpoint form sent, as the domain takes it: no box ticked is every kind, an empty field is none. */
export function endpointInput(body: FormBody): { values: EndpointFormValues; input: RegisterInput } {
  const reads = FORM_SETTINGS.map((name) => [name, (OWN_READS[name] ?? ((b) => readField(b, name)))(body)] as const);
  return {
    values: Object.fromEntries(reads.map(([name, read]) => [name, read.value])),
    input: Object.fromEntries(reads.map(([name, read]) => [name, read.input])) as RegisterInput,
  };
}

/**
 * A change from the form sends every field: a text left empty clears it, no box ticked is every kind again; the
 * others (a choice, the headers' lines) stay as they are when not given.
 */
function changeFromForm(input: RegisterInput): UpdateInput {
  const change: Record<string, unknown> = { ...input };
  for (const name of FORM_SETTINGS) {
    if (change[name] !== undefined) continue;
    const kind = formSpec(name).input;
    if (kind === 'text') change[name] = null;
    if (kind === 'checkboxes') change[name] = [];
  }
  return change;
}

export default async function endpointRoutes(app: FastifyInstance, options: DashboardRouteOptions): Promise<void> {
  const hide = { hide: true };
  const deps = (): EndpointDeps => options.deps();
  const context = (request: FastifyRequest<{ Params: { mode: string } }>, extra: Partial<PageContext> = {}) =>
    pageContext(request, options.assets, parseModeParam(request.params.mode), extra);

  async function renderEndpoint(
    reply: FastifyReply,
    ctx: PageContext,
    endpoint: EndpointRecord,
    extra: Partial<Pick<EndpointPageInput, 'secret' | 'error'>> & { window?: ChartWindow } = {},
    status = 200,
  ) {
    const [notifications, health] = await Promise.all([
      listNotificationsForEndpoint(deps().pool, scopeOf(ctx), endpoint.id),
      endpointHealth(deps().pool, endpoint.id, extra.window ?? '24h', ctx.now),
    ]);
    return sendPage(
      reply,
      endpointPage(ctx, {
        endpoint,
        eventTypes: EVENT_TYPES,
        notifications,
        features: FEATURES.endpoint,
        health,
        ...extra,
      }),
      status,
    );
  }

  /** The mode's endpoints page, with what a failed add brings back (the error and the values sent). */
  const listPage = async (ctx: PageContext, failed: Pick<EndpointsPageInput, 'error' | 'form'> = {}) =>
    endpointsPage(ctx, {
      endpoints: (await listEndpoints(deps(), scopeOf(ctx), { limit: MAX_ENDPOINTS_PER_MODE })).data,
      eventTypes: EVENT_TYPES,
      canRecover: FEATURES.endpoint.recover,
      ...failed,
    });

  app.get<ModeParams>(
    '/dashboard/:mode/endpoints',
    { schema: hide, config: { dashboard: 'page' } },
    async (request, reply) => {
      const ctx = context(request, { notice: notice(request.query) });
      return sendPage(reply, await listPage(ctx));
    },
  );

  app.post<ModeParams>(
    '/dashboard/:mode/endpoints',
    { schema: hide, config: { dashboard: 'action' } },
    async (request, reply) => {
      const { values, input } = endpointInput(request.body as FormBody);
      try {
        const created = await registerEndpoint(deps(), scopeOf(context(request)), input, actorOf(request));
        const ctx = context(request, { canonical: paths.endpoint(parseModeParam(request.params.mode), created.id) });
        const { secret, ...endpoint } = created;
        return await renderEndpoint(reply, ctx, endpoint, { secret: { value: secret, reason: 'created' } });
      } catch (err) {
        const ctx = context(request, { canonical: paths.endpoints(parseModeParam(request.params.mode)) });
        return sendPage(reply, await listPage(ctx, { error: formError(err), form: values }), errorStatus(err));
      }
    },
  );

  app.get<EndpointParams & { Querystring: { window?: string } }>(
    '/dashboard/:mode/endpoints/:id',
    { schema: hide, config: { dashboard: 'page' } },
    async (request, reply) => {
      const ctx = context(request, { notice: notice(request.query) });
      // The chart's window: the last 24 hours unless the "Last 7 days" link asked for the week.
      const window = isChartWindow(request.query.window) ? request.query.window : '24h';
      return renderEndpoint(reply, ctx, await getEndpoint(deps(), scopeOf(ctx), request.params.id), { window });
    },
  );

  app.get<EndpointParams & { Querystring: { outcome?: string; starting_after?: string } }>(
    '/dashboard/:mode/endpoints/:id/deliveries',
    { schema: hide, config: { dashboard: 'page' } },
    async (request, reply) => {
      const ctx = context(request);
      const endpoint = await getEndpoint(deps(), scopeOf(ctx), request.params.id);
      const outcome =
        request.query.outcome === 'succeeded' || request.query.outcome === 'failed' ? request.query.outcome : undefined;
      const startingAfter = request.query.starting_after || undefined;
      const attempts = await listDeliveries(deps(), scopeOf(ctx), endpoint.id, {
        limit: DELIVERIES_PER_PAGE,
        outcome,
        startingAfter,
      });
      return sendPage(reply, deliveriesPage(ctx, { endpoint, attempts, outcome, startingAfter }));
    },
  );

  /** Rotate and delete ask first (app.js in a dialog, else this page). */
  function confirmFirst(
    request: FastifyRequest<EndpointParams>,
    reply: FastifyReply,
    ctx: PageContext,
    endpoint: EndpointRecord,
    action: 'rotate' | 'delete',
  ) {
    const mode: Mode = ctx.mode;
    const questions = {
      rotate: {
        question: 'Rotate the signing secret?',
        consequence:
          'A new secret is shown once. The old one keeps signing deliveries for a grace period so your receivers can switch over.',
        confirmLabel: 'Rotate secret',
        danger: false,
      },
      delete: {
        question: `Delete the endpoint ${endpoint.url}?`,
        consequence: 'Its pending retries stop and it receives nothing more. This cannot be undone.',
        confirmLabel: 'Delete',
        danger: true,
      },
    } as const;
    return sendPage(
      reply,
      confirmPage(ctx, {
        section: 'endpoints',
        ...questions[action],
        action: paths.endpointAction(mode, endpoint.id, action),
        cancelHref: paths.endpoint(mode, endpoint.id),
      }),
    );
  }

  app.post<EndpointParams>(
    '/dashboard/:mode/endpoints/:id/rotate',
    { schema: hide, config: { dashboard: 'action' } },
    async (request, reply) => {
      const ctx = context(request, {
        canonical: paths.endpoint(parseModeParam(request.params.mode), request.params.id),
      });
      const endpoint = await getEndpoint(deps(), scopeOf(ctx), request.params.id);
      if (text(request.body as FormBody, 'confirm') !== 'yes')
        return confirmFirst(request, reply, ctx, endpoint, 'rotate');
      const { secret, ...rotated } = await rotateEndpointSecret(deps(), scopeOf(ctx), endpoint.id, actorOf(request));
      return renderEndpoint(reply, ctx, rotated, { secret: { value: secret, reason: 'rotated' } });
    },
  );

  app.post<EndpointParams>(
    '/dashboard/:mode/endpoints/:id/delete',
    { schema: hide, config: { dashboard: 'action' } },
    async (request, reply) => {
      const ctx = context(request);
      const endpoint = await getEndpoint(deps(), scopeOf(ctx), request.params.id);
      if (text(request.body as FormBody, 'confirm') !== 'yes')
        return confirmFirst(request, reply, ctx, endpoint, 'delete');
      await deleteEndpoint(deps(), scopeOf(ctx), endpoint.id, actorOf(request));
      return reply.redirect(`${paths.endpoints(ctx.mode)}?notice=endpoint_deleted`, 303);
    },
  );

  /** A form on the endpoint's page that failed: the page again, the error beside its form. */
  async function formFailed(
    reply: FastifyReply,
    ctx: PageContext,
    id: string,
    form: 'change' | 'test' | 'recover' | 'other',
    err: unknown,
    values?: EndpointFormValues,
  ) {
    const error = formError(err);
    const endpoint = await getEndpoint(deps(), scopeOf(ctx), id);
    return renderEndpoint(reply, ctx, endpoint, { error: { form, error, values } }, errorStatus(err));
  }

  app.post<EndpointParams>(
    '/dashboard/:mode/endpoints/:id/update',
    { schema: hide, config: { dashboard: 'action' } },
    async (request, reply) => {
      const ctx = context(request, {
        canonical: paths.endpoint(parseModeParam(request.params.mode), request.params.id),
      });
      const { values, input } = endpointInput(request.body as FormBody);
      try {
        await updateEndpoint(deps(), scopeOf(ctx), request.params.id, changeFromForm(input), actorOf(request));
      } catch (err) {
        return formFailed(reply, ctx, request.params.id, 'change', err, values);
      }
      return reply.redirect(`${paths.endpoint(ctx.mode, request.params.id)}?notice=endpoint_updated`, 303);
    },
  );

  for (const [action, disabled] of [
    ['disable', true],
    ['enable', false],
  ] as const) {
    app.post<EndpointParams>(
      `/dashboard/:mode/endpoints/:id/${action}`,
      { schema: hide, config: { dashboard: 'action' } },
      async (request, reply) => {
        const ctx = context(request);
        const endpoint = await getEndpoint(deps(), scopeOf(ctx), request.params.id);
        if (disabled && text(request.body as FormBody, 'confirm') !== 'yes') {
          return sendPage(
            reply,
            confirmPage(ctx, {
              section: 'endpoints',
              question: 'Disable this endpoint?',
              consequence:
                'It gets no new events and its pending retries stop. Enabling it later does not send what it missed; recover does.',
              action: paths.endpointAction(ctx.mode, endpoint.id, 'disable'),
              confirmLabel: 'Disable',
              cancelHref: paths.endpoint(ctx.mode, endpoint.id),
            }),
          );
        }
        await updateEndpoint(deps(), scopeOf(ctx), endpoint.id, { disabled }, actorOf(request));
        return reply.redirect(
          `${paths.endpoint(ctx.mode, endpoint.id)}?notice=endpoint_${disabled ? 'disabled' : 'enabled'}`,
          303,
        );
      },
    );
  }

  for (const [action, change] of [
    ['pause', pauseEndpoint],
    ['resume', resumeEndpoint],
  ] as const) {
    app.post<EndpointParams>(
      `/dashboard/:mode/endpoints/:id/${action}`,
      { schema: hide, config: { dashboard: 'action' } },
      async (request, reply) => {
        const ctx = context(request);
        const endpoint = await change(deps(), scopeOf(ctx), request.params.id, actorOf(request));
        return reply.redirect(`${paths.endpoint(ctx.mode, endpoint.id)}?notice=endpoint_${action}d`, 303);
      },
    );
  }

  app.post<EndpointParams>(
    '/dashboard/:mode/endpoints/:id/test',
    { schema: hide, config: { dashboard: 'action' } },
    async (request, reply) => {
      const ctx = context(request, {
        canonical: paths.endpoint(parseModeParam(request.params.mode), request.params.id),
      });
      try {
        const event = await sendTestEvent(options.deps(), scopeOf(ctx), request.params.id, {
          type: optional(request.body as FormBody, 'type'),
        });
        return reply.redirect(`${paths.event(ctx.mode, event.id)}?notice=test_sent`, 303);
      } catch (err) {
        return formFailed(reply, ctx, request.params.id, 'test', err);
      }
    },
  );

  app.post<EndpointParams>(
    '/dashboard/:mode/endpoints/:id/recover',
    { schema: hide, config: { dashboard: 'action' } },
    async (request, reply) => {
      const ctx = context(request, {
        canonical: paths.endpoint(parseModeParam(request.params.mode), request.params.id),
      });
      const body = request.body as FormBody;
      try {
        const since = utcSeconds(optional(body, 'since'), 'since');
        if (since === undefined)
          throw new ApiError('parameter_missing', 'Enter the start of the window to recover.', { param: 'since' });
        const recovery = await recoverEndpoint(options.deps(), scopeOf(ctx), request.params.id, {
          since,
          until: utcSeconds(optional(body, 'until'), 'until'),
        });
        const endpoint = await getEndpoint(deps(), scopeOf(ctx), request.params.id);
        const notice =
          recovery.event_count === 0
            ? 'Nothing to recover in that window: every event meant for this endpoint was delivered, or is still being delivered.'
            : `Recovering ${recovery.event_count} event${recovery.event_count === 1 ? '' : 's'}: they are sent again at a gentle pace and appear in the deliveries as they go.`;
        return renderEndpoint(reply, { ...ctx, notice }, endpoint);
      } catch (err) {
        return formFailed(reply, ctx, request.params.id, 'recover', err);
      }
    },
  );
}
