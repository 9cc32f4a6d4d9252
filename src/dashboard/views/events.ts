import { badge, errorSummary, pager, selectField, table } from './components';
import { ATTEMPT_HEAD, attemptRow, triggerLabel } from './deliveries';
import { stamp } from './format';
import { html, type Html } from './html';
import { csrfField, layout, readOnly } from './layout';
import type {
  AttemptView,
  EndpointView,
  EventDeliveryView,
  EventDetailView,
  EventView,
  FormError,
  Page,
  PageContext,
} from './models';
import { paths } from './paths';

export interface EventsPageInput {
  events: Page<EventView>;
  eventTypes: readonly string[];
  type?: string;
  /** A delivery_state filter (not_delivered, delivered, retrying, abandoned, none). */
  deliveryState?: string;
  /** What the search box held: an event id or a parcel's id, number or tracking number. */
  q?: string;
  startingAfter?: string;
}

const STATE_BADGES: Record<NonNullable<EventView['delivery_state']>, Html> = {
  delivered: badge('Delivered', 'ok'),
  retrying: badge('Retrying', 'info'),
  abandoned: badge('Abandoned', 'danger'),
  none: badge('Not sent', 'muted'),
};

const STATE_OPTIONS = [
  { value: '', label: 'Any state' },
  { value: 'not_delivered', label: 'Not delivered (retrying or abandoned)' },
  { value: 'delivered', label: 'Delivered' },
  { value: 'retrying', label: 'Retrying' },
  { value: 'abandoned', label: 'Abandoned' },
  { value: 'none', label: 'Not sent' },
];

function filters(ctx: PageContext, input: EventsPageInput): Html {
  return html`<form method="get" action="${paths.events(ctx.mode)}" class="row filter" role="search" aria-label="Filter events">
<div class="field"><label for="q">Event or parcel</label>
<p class="hint" id="q-hint">An event id, or a parcel's id, number or tracking number.</p>
<input id="q" name="q" type="search" value="${input.q ?? ''}" maxlength="200" aria-describedby="q-hint" autocomplete="off" spellcheck="false"></div>
${selectField({ id: 'delivery_state', name: 'delivery_state', label: 'Delivery', selected: input.deliveryState ?? '', options: STATE_OPTIONS })}
${selectField({
  id: 'type',
  name: 'type',
  label: 'Event kind',
  selected: input.type ?? '',
  options: [{ value: '', label: 'All kinds' }, ...input.eventTypes.map((kind) => ({ value: kind, label: kind }))],
})}
<button type="submit" class="secondary">Filter</button>
${input.type || input.deliveryState || input.q ? html`<a href="${paths.events(ctx.mode)}">Clear</a>` : ''}
</form>`;
}

function emptyText(ctx: PageContext, input: EventsPageInput): string {
  if (input.q) return `No ${ctx.mode} event matches ${input.q}.`;
  if (input.type || input.deliveryState) return 'No event matches these filters.';
  return `No ${ctx.mode} events yet.`;
}

export function eventsPage(ctx: PageContext, input: EventsPageInput): Html {
  const last = input.events.data[input.events.data.length - 1];
  const query = { type: input.type, deliveryState: input.deliveryState, q: input.q };
  const rows = input.events.data.map(
    (event) => html`<tr>
<td>${stamp(event.created)}</td>
<td><a href="${paths.event(ctx.mode, event.id)}"><code>${event.type}</code></a></td>
<td class="state">${event.delivery_state ? STATE_BADGES[event.delivery_state] : ''}${event.pending_webhooks ? html`<div class="muted small-text">${event.pending_webhooks} pending</div>` : ''}</td>
<td>${event.parcel_number ?? html`<span class="muted">None</span>`}</td>
<td><code>${event.id}</code></td>
</tr>`,
  );
  return layout(ctx, {
    title: 'Events',
    section: 'events',
    body: html`<p class="lede">Every ${ctx.mode}-mode event sent to your endpoints, newest first. Open one to see each attempt and to resend it.</p>
${filters(ctx, input)}
${table({
  caption: `${ctx.mode === 'test' ? 'Test' : 'Live'} events, newest first`,
  head: ['Time', 'Kind', 'Delivery', 'Parcel', 'ID'],
  rows,
  empty: emptyText(ctx, input),
})}
${pager({
  onFirstPage: input.startingAfter === undefined,
  firstHref: paths.events(ctx.mode, query),
  nextHref: input.events.hasMore && last ? paths.events(ctx.mode, { ...query, startingAfter: last.id }) : undefined,
})}`,
  });
}

const DELIVERY_STATUS: Record<EventDeliveryView['status'], Html> = {
  pending: badge('Retrying', 'info'),
  succeeded: badge('Succeeded', 'ok'),
  failed: badge('Failed', 'danger'),
  skipped: badge('Skipped', 'muted'),
};

export interface EventPageInput {
  event: EventDetailView;
  /** Endpoints named in the deliveries and attempts (deleted ones may be missing). */
  endpoints: Map<string, Pick<EndpointView, 'id' | 'url' | 'status'>>;
  /** Every attempt of this event, to every endpoint, newest first. */
  attempts: AttemptView[];
  /** Endpoints it can be resent to: live and subscribed to its kind. */
  resendTargets: Pick<EndpointView, 'id' | 'url'>[];
  /** After a resend: the endpoints it went to. */
  resent?: string[];
  error?: FormError;
}

function endpointName(input: EventPageInput, id: string): Html {
  const endpoint = input.endpoints.get(id);
  return endpoint
    ? html`<span class="url">${endpoint.url}</span>`
    : html`<code>${id}</code> <span class="muted">(deleted)</span>`;
}

function resendForm(ctx: PageContext, input: EventPageInput): Html {
  if (readOnly(ctx) || input.resendTargets.length === 0) return html``;
  return html`<section class="panel" aria-labelledby="resend-title">
<h2 id="resend-title">Resend</h2>
<p>Posts the same event again (same id and body, fresh signature), with the usual retries.</p>
<form method="post" action="${paths.resend(ctx.mode, input.event.id)}" class="row">
${errorSummary(input.error)}
${csrfField(ctx.csrfToken)}
${selectField({
  id: 'resend-endpoint',
  name: 'endpoint_id',
  label: 'To',
  options: [
    { value: '', label: 'Every endpoint it was sent to' },
    ...input.resendTargets.map((endpoint) => ({ value: endpoint.id, label: endpoint.url })),
  ],
})}
<button type="submit">Resend</button>
</form>
</section>`;
}

/**
 * A delivery's status: one still pending is `Retrying` once attempted, `Pending` before its first attempt, and
 * `Held` while its endpoint is paused (it goes out on resume).
 */
function deliveryStatus(input: EventPageInput, delivery: EventDeliveryView): Html {
  if (delivery.status !== 'pending') return DELIVERY_STATUS[delivery.status];
  if (input.endpoints.get(delivery.endpoint_id)?.status === 'paused')
    return html`${badge('Held', 'info')}<div class="muted small-text">while the endpoint is paused</div>`;
  return delivery.attempts === 0 ? badge('Pending', 'info') : DELIVERY_STATUS.pending;
}

/** An ordered delivery held back behind the parcel's event before it (endpoint ordering 'parcel'). */
function waitingFor(ctx: PageContext, delivery: EventDeliveryView): Html | '' {
  if (!delivery.waiting_for) return '';
  return html`<div class="muted small-text">waiting for <a href="${paths.event(ctx.mode, delivery.waiting_for)}"><code>${delivery.waiting_for}</code></a></div>`;
}

export function eventPage(ctx: PageContext, input: EventPageInput): Html {
  const { event } = input;
  const deliveries = input.event.deliveries.map(
    (delivery) => html`<tr>
<td>${endpointName(input, delivery.endpoint_id)}</td>
<td>${triggerLabel(delivery.trigger)}</td>
<td>${deliveryStatus(input, delivery)}${delivery.reason ? html`<div class="muted small-text">${delivery.reason.replace(/_/g, ' ')}</div>` : ''}${waitingFor(ctx, delivery)}</td>
<td>${delivery.attempts}</td>
<td>${delivery.last_status_code ?? html`<span class="muted">None</span>`}</td>
<td>${delivery.last_attempt_at === null ? html`<span class="muted">Not yet</span>` : stamp(delivery.last_attempt_at)}</td>
</tr>`,
  );
  const resent = !input.resent
    ? ''
    : input.resent.length === 0
      ? html`<p class="notice" role="status">Nothing was resent: no enabled endpoint received this event.</p>`
      : html`<p class="notice" role="status">Resent to ${input.resent.map((id, index) => html`${index > 0 ? ', ' : ''}${endpointName(input, id)}`)}. New attempts appear below as they happen.</p>`;
  return layout(ctx, {
    title: `Event ${event.id}`,
    section: 'events',
    heading: html`<span class="muted">Event</span> <code>${event.type}</code>`,
    body: html`${resent}
<p><a href="${paths.events(ctx.mode)}">Back to events</a></p>
<dl class="facts">
<div><dt>ID</dt><dd><code>${event.id}</code></dd></div>
<div><dt>Created</dt><dd>${stamp(event.created)}</dd></div>
<div><dt>Delivery</dt><dd>${event.delivery_state ? STATE_BADGES[event.delivery_state] : html`<span class="muted">Unknown</span>`}</dd></div>
<div><dt>Still delivering</dt><dd>${event.pending_webhooks ?? 0}</dd></div>
</dl>
<h2>Deliveries</h2>
${table({
  caption: 'Deliveries of this event, one per endpoint and trigger',
  captionHidden: true,
  head: ['Endpoint', 'Trigger', 'Status', 'Attempts', 'Last status code', 'Last attempt'],
  rows: deliveries,
  empty: 'No endpoint was subscribed to this event when it was sent.',
})}
${resendForm(ctx, input)}
<h2>Attempts</h2>
${table({
  caption: 'Every attempt to every endpoint, newest first',
  captionHidden: true,
  head: [ATTEMPT_HEAD[0], 'Endpoint', ...ATTEMPT_HEAD.slice(2)],
  rows: input.attempts.map((attempt) =>
    attemptRow(ctx.mode, attempt, {
      endpointUrl: input.endpoints.get(attempt.endpoint_id)?.url ?? attempt.endpoint_id,
      showEvent: false,
    }),
  ),
  empty: 'No attempt yet.',
})}
<h2>Body</h2>
<pre class="body json">${JSON.stringify({ id: event.id, object: 'event', type: event.type, created: event.created, data: event.data }, null, 2)}</pre>`,
  });
}
