import { API_VERSIONS, changesSince, LATEST_API_VERSION } from '../../core/versions';
import { healthSection } from './charts';
import { badge, checkboxGroup, confirmForm, errorSummary, field, selectField, shownOnce, table } from './components';
import { plural, stamp, time } from './format';
import { html, type Html } from './html';
import { csrfField, layout, readOnly } from './layout';
import type { EndpointHealthView, EndpointView, FormError, NotificationView, PageContext } from './models';
import { paths } from './paths';

export interface EndpointFormValues {
  url: string;
  description: string;
  /** Empty: every kind. */
  events: string[];
  /** "Deliver in order per parcel" ticked (ordering 'parcel'). */
  ordered?: boolean;
  /** As typed; empty: no limit. */
  rateLimit?: string;
  /** "Name: value" lines, as typed. */
  headers?: string;
  /** The API version chosen; absent: the newest. */
  apiVersion?: string;
}

/** Which endpoint actions the domain offers yet; a form is shown only when its function exists. */
export interface EndpointFeatures {
  change: boolean;
  test: boolean;
  recover: boolean;
}

export const ALL_ENDPOINT_FEATURES: EndpointFeatures = { change: true, test: true, recover: true };

export function endpointStatus(endpoint: Pick<EndpointView, 'status' | 'failing'>): Html {
  if (endpoint.status === 'disabled' || endpoint.status === 'paused') {
    const shown = endpoint.status === 'disabled' ? badge('Disabled', 'muted') : badge('Paused', 'warn');
    return html`${shown}${endpoint.failing ? html` ${badge('Failing', 'danger')}` : ''}`;
  }
  return endpoint.status === 'failing' ? badge('Failing', 'danger') : badge('Enabled', 'ok');
}

function eventsSummary(endpoint: EndpointView, eventTypes: readonly string[]): Html {
  const all = eventTypes.every((kind) => endpoint.events.includes(kind));
  return all ? html`All event kinds` : html`${endpoint.events.map((kind) => html`<code>${kind}</code> `)}`;
}

function endpointFields(input: {
  prefix: string;
  values: EndpointFormValues;
  eventTypes: readonly string[];
  error?: FormError;
}): Html {
  const param = input.error?.param;
  return html`${field({
    id: `${input.prefix}-url`,
    name: 'url',
    label: 'Endpoint URL',
    type: 'url',
    value: input.values.url,
    required: true,
    placeholder: 'https://shop.example/webhooks/parcel',
    hint: 'A public https address. We sign every request; verify the Service-Signature header.',
    maxLength: 2048,
    invalid: param === 'url',
  })}
${field({
  id: `${input.prefix}-description`,
  name: 'description',
  label: 'Description',
  value: input.values.description,
  maxLength: 500,
  invalid: param === 'description',
})}
${field({
  id: `${input.prefix}-rate-limit`,
  name: 'rate_limit',
  label: 'Rate limit (per second)',
  value: input.values.rateLimit ?? '',
  maxLength: 4,
  hint: 'At most this many deliveries per second, 1 to 1000; later ones wait their turn. Empty: no limit.',
  invalid: param === 'rate_limit',
})}
${checkboxGroup({
  legend: 'Events to send',
  name: 'events',
  idPrefix: `${input.prefix}-event`,
  hint: 'Leave every box empty to receive every kind, including kinds added later.',
  invalid: param === 'events',
  options: input.eventTypes.map((kind) => ({ value: kind, label: kind, checked: input.values.events.includes(kind) })),
})}
${orderingField(input.prefix, input.values.ordered ?? false, param === 'ordering')}
${headersField(input.prefix, input.values.headers ?? '', param?.startsWith('headers') ?? false)}
${apiVersionField(input.prefix, input.values.apiVersion ?? LATEST_API_VERSION)}`;
}

/** Custom headers as lines of `Name: value`; `Name:` alone removes that header; headers not listed stay. */
function headersField(prefix: string, value: string, invalid: boolean): Html {
  const id = `${prefix}-headers`;
  return html`<div class="field${invalid ? ' invalid' : ''}">
<label for="${id}">Custom headers</label>
<textarea id="${id}" name="headers" rows="3" aria-describedby="${id}-hint"${invalid ? html` aria-invalid="true"` : ''}>${value}</textarea>
<p class="hint" id="${id}-hint">One "Name: value" per line, sent on every delivery (at most 20). "Name:" alone removes a header; headers not listed stay. Values of Authorization, Proxy-Authorization, Cookie and of names with token, secret, key, password or auth are hidden: never shown again. Changing the URL to another host drops the hidden headers (credentials) unless you enter them again.</p>
</div>`;
}

/** A version as the page names it: the newest marked, a version with a sunset date shows it. */
function versionLabel(name: string): string {
  const version = API_VERSIONS.find((candidate) => candidate.name === name);
  if (name === LATEST_API_VERSION) return `${name} (newest)`;
  return version?.sunset ? `${name} (served until ${version.sunset})` : name;
}

/** What an endpoint on `name` does not get yet: the changes of every newer version. */
function changesToNewest(name: string): Html {
  const changes = changesSince(name);
  if (changes.length === 0) return html`<span class="muted">The newest: nothing differs.</span>`;
  return html`Differs from the newest, ${LATEST_API_VERSION}:<ul class="version-changes">${changes.map(
    (change) => html`<li>${change.version}, <code>${change.type}</code>: ${change.summary}</li>`,
  )}</ul>`;
}

/** The API version its events are rendered in; a change applies to deliveries made after it. */
function apiVersionField(prefix: string, selected: string): Html {
  const id = `${prefix}-api-version`;
  return html`${selectField({
    id,
    name: 'api_version',
    label: 'API version',
    options: API_VERSIONS.map((version) => ({ value: version.name, label: versionLabel(version.name) })),
    selected,
    hint: 'The shape of the events this endpoint receives (sent as the Service-Version header). A change applies to deliveries made after it.',
  })}
<div class="hint">${changesToNewest(selected)}</div>`;
}

/** The endpoint's ordering as one box: ticked is 'parcel', unticked 'none'. */
function orderingField(prefix: string, ordered: boolean, invalid: boolean): Html {
  const id = `${prefix}-ordering`;
  return html`<div class="check${invalid ? ' invalid' : ''}">
<input type="checkbox" id="${id}" name="ordering" value="parcel" aria-describedby="${id}-hint"${ordered ? html` checked` : ''}>
<label for="${id}">Deliver in order per parcel</label>
<p class="hint" id="${id}-hint">A parcel's next event is sent only once the one before it was delivered or given up. Other parcels are never held up.</p>
</div>`;
}

export interface EndpointsPageInput {
  endpoints: EndpointView[];
  /** Whether recovering missed events is offered yet (the failing banner points to it). */
  canRecover?: boolean;
  eventTypes: readonly string[];
  error?: FormError;
  form?: EndpointFormValues;
}

export function endpointsPage(ctx: PageContext, input: EndpointsPageInput): Html {
  const failing = input.endpoints.filter((endpoint) => endpoint.status === 'failing' || endpoint.failing);
  const rows = input.endpoints.map(
    (endpoint) => html`<tr>
<td class="url"><a href="${paths.endpoint(ctx.mode, endpoint.id)}">${endpoint.url}</a>${endpoint.description ? html`<div class="muted">${endpoint.description}</div>` : ''}</td>
<td>${endpointStatus(endpoint)}</td>
<td>${eventsSummary(endpoint, input.eventTypes)}</td>
<td>${time(endpoint.created, { now: ctx.now })}</td>
<td><a href="${paths.deliveries(ctx.mode, endpoint.id)}" aria-label="Deliveries to ${endpoint.url}">Deliveries</a></td>
</tr>`,
  );
  const addForm = readOnly(ctx)
    ? ''
    : html`<section class="panel" aria-labelledby="add-title">
<h2 id="add-title">Add endpoint</h2>
<form method="post" action="${paths.endpoints(ctx.mode)}" class="stack" novalidate>
${errorSummary(input.error, { url: 'add-url', description: 'add-description', rate_limit: 'add-rate-limit', events: 'add-event-0' })}
${csrfField(ctx.csrfToken)}
${endpointFields({ prefix: 'add', values: input.form ?? { url: '', description: '', events: [], ordered: false }, eventTypes: input.eventTypes, error: input.error })}
<div class="actions"><button type="submit">Add endpoint</button></div>
</form>
</section>`;
  return layout(ctx, {
    title: 'Webhooks',
    section: 'endpoints',
    body: html`${
      failing.length > 0
        ? html`<div class="banner banner-danger" role="note"><strong>${plural(failing.length, 'endpoint is', 'endpoints are')} failing.</strong>
Open ${failing.length === 1 ? 'it' : 'each'} to see what went wrong${input.canRecover ? '; once the receiver works again, recover the events it missed' : ''}.</div>`
        : ''
    }
<p class="lede">We post signed ${ctx.mode}-mode events to these endpoints and retry failures for about seven hours.</p>
${table({
  caption: `${ctx.mode === 'test' ? 'Test' : 'Live'} endpoints`,
  head: ['URL', 'Status', 'Events', 'Created', html`<span class="visually-hidden">Deliveries</span>`],
  rows,
  empty: `No ${ctx.mode} endpoints yet.`,
})}
${addForm}`,
  });
}

export interface EndpointPageInput {
  endpoint: EndpointView;
  eventTypes: readonly string[];
  notifications: NotificationView[];
  features: EndpointFeatures;
  /** Its deliveries per hour over the chosen window; no chart when absent. */
  health?: EndpointHealthView;
  /** Just registered or rotated: the only time the secret is shown. */
  secret?: { value: string; reason: 'created' | 'rotated' };
  /** Which form an error belongs to, and what was typed. */
  error?: { form: 'change' | 'test' | 'recover' | 'other'; error: FormError; values?: EndpointFormValues };
}

function secretBox(input: NonNullable<EndpointPageInput['secret']>): Html {
  return shownOnce({
    id: 'signing-secret',
    title: input.reason === 'created' ? 'Endpoint added: its signing secret' : 'New signing secret',
    label: 'Signing secret',
    value: input.value,
    explanation:
      input.reason === 'created'
        ? html`Your receiver needs it to verify the <code>Service-Signature</code> header. <strong>It is shown only this once</strong>: copy it now.`
        : html`Deliveries are signed with both the old and the new secret for a grace period, so your receivers can switch over. <strong>It is shown only this once</strong>: copy it now.`,
  });
}

function failingNote(
  endpoint: EndpointView,
  input: Pick<EndpointPageInput, 'notifications' | 'features'>,
  now?: Date,
): Html | undefined {
  if (endpoint.status !== 'failing' && !endpoint.failing) return undefined;
  const latest = input.notifications[0];
  const emailed = latest?.email_sent_at && latest.email_to ? html` by email to ${latest.email_to}` : '';
  const next =
    input.features.test && input.features.recover
      ? 'fix the receiver, send a test event, then recover the events it missed.'
      : 'fix the receiver; the next event delivered to it clears the mark.';
  return html`<div class="banner banner-danger" role="note">
<strong>This endpoint is failing.</strong> Deliveries to it were given up after every retry failed.
${latest ? html`We told you ${time(latest.created_at, { now })}${emailed}.` : ''}
The mark clears at the next successful delivery: ${next}
</div>`;
}

/** Why nothing goes out to it: paused by its owner (since when), or disabled by the engine after a 410 Gone. */
function lifecycleNote(endpoint: EndpointView): Html | undefined {
  if (endpoint.status === 'paused' && endpoint.paused_at != null) {
    return html`<div class="banner banner-warn" role="note">
<strong>This endpoint is paused</strong> since ${stamp(endpoint.paused_at)}. New events and retries are held: nothing is sent and nothing counts as a failure.
When you resume it, what was held goes out within a few minutes, in order and within its rate limit; a delivery held past its maximum age expires.
</div>`;
  }
  if (endpoint.status === 'disabled' && endpoint.disabled_reason === 'gone') {
    return html`<div class="banner banner-danger" role="note">
<strong>This endpoint was disabled because it answered 410 Gone.</strong> A receiver answers 410 when the endpoint is no more: nothing more is sent to it, and its pending deliveries were skipped.
If it is back, enable it, then recover the events it missed.
</div>`;
  }
  return undefined;
}

/** Pause or Resume: a paused endpoint keeps what it is sent until it is resumed. */
function pauseToggle(ctx: PageContext, endpoint: EndpointView): Html | string {
  if (endpoint.status === 'disabled') return '';
  const action = endpoint.status === 'paused' ? 'resume' : 'pause';
  return html`<form method="post" action="${paths.endpointAction(ctx.mode, endpoint.id, action)}" class="inline">${csrfField(ctx.csrfToken)}<button type="submit" class="secondary small">${action === 'resume' ? 'Resume' : 'Pause'}</button></form>`;
}

function actions(ctx: PageContext, input: EndpointPageInput): Html {
  const { endpoint } = input;
  const testForm =
    input.features.test && endpoint.status !== 'disabled'
      ? html`<form method="post" action="${paths.endpointAction(ctx.mode, endpoint.id, 'test')}" class="row">
${csrfField(ctx.csrfToken)}
${input.error?.form === 'test' ? errorSummary(input.error.error) : ''}
${selectField({ id: 'test-type', name: 'type', label: 'Event kind', options: endpoint.events.map((kind) => ({ value: kind, label: kind })) })}
<button type="submit">Send test event</button>
</form>`
      : '';
  const toggle = !input.features.change
    ? ''
    : endpoint.status === 'disabled'
      ? html`<form method="post" action="${paths.endpointAction(ctx.mode, endpoint.id, 'enable')}" class="inline">${csrfField(ctx.csrfToken)}<button type="submit" class="secondary small">Enable</button></form>`
      : confirmForm({
          action: paths.endpointAction(ctx.mode, endpoint.id, 'disable'),
          csrfToken: ctx.csrfToken,
          label: 'Disable',
          question: 'Disable this endpoint?',
          consequence:
            'It gets no new events and its pending retries stop. Enabling it later does not send what it missed; recover does.',
        });
  return html`<section class="panel" aria-labelledby="actions-title">
<h2 id="actions-title">Actions</h2>
${testForm}
<div class="button-row">
${input.features.change ? pauseToggle(ctx, endpoint) : ''}
${toggle}
${confirmForm({
  action: paths.endpointAction(ctx.mode, endpoint.id, 'rotate'),
  csrfToken: ctx.csrfToken,
  label: 'Rotate secret',
  question: 'Rotate the signing secret?',
  consequence:
    'A new secret is shown once. The old one keeps signing deliveries for a grace period so your receivers can switch over.',
})}
${confirmForm({
  action: paths.endpointAction(ctx.mode, endpoint.id, 'delete'),
  csrfToken: ctx.csrfToken,
  label: 'Delete',
  accessibleLabel: `Delete endpoint ${endpoint.url}`,
  question: 'Delete this endpoint?',
  consequence: 'Its pending retries stop and it receives nothing more. This cannot be undone.',
  danger: true,
})}
</div>
</section>`;
}

function changeForm(ctx: PageContext, input: EndpointPageInput): Html {
  const { endpoint } = input;
  const all = input.eventTypes.every((kind) => endpoint.events.includes(kind));
  const values =
    input.error?.form === 'change' && input.error.values
      ? input.error.values
      : {
          url: endpoint.url,
          description: endpoint.description ?? '',
          events: all ? [] : endpoint.events,
          ordered: endpoint.ordering === 'parcel',
          rateLimit: endpoint.rate_limit?.toString() ?? '',
          apiVersion: endpoint.api_version,
        };
  const error = input.error?.form === 'change' ? input.error.error : undefined;
  return html`<section class="panel" aria-labelledby="change-title">
<h2 id="change-title">Change endpoint</h2>
<form method="post" action="${paths.endpointAction(ctx.mode, endpoint.id, 'update')}" class="stack" novalidate>
${errorSummary(error, { url: 'change-url', description: 'change-description', rate_limit: 'change-rate-limit', events: 'change-event-0' })}
${csrfField(ctx.csrfToken)}
${endpointFields({ prefix: 'change', values, eventTypes: input.eventTypes, error })}
<div class="actions"><button type="submit">Save changes</button></div>
</form>
</section>`;
}

function recoverForm(ctx: PageContext, input: EndpointPageInput): Html {
  const error = input.error?.form === 'recover' ? input.error.error : undefined;
  return html`<section class="panel" aria-labelledby="recover-title">
<h2 id="recover-title">Recover missed events</h2>
<p>Sends again every event of a time window that was meant for this endpoint and never delivered to it. Deliveries
start at a gentle pace, so a receiver coming back is not flooded.</p>
<form method="post" action="${paths.endpointAction(ctx.mode, input.endpoint.id, 'recover')}" class="stack" novalidate>
${errorSummary(error, { since: 'recover-since', until: 'recover-until' })}
${csrfField(ctx.csrfToken)}
<div class="row">
${field({ id: 'recover-since', name: 'since', label: 'From (UTC)', type: 'datetime-local', required: true, invalid: error?.param === 'since' })}
${field({ id: 'recover-until', name: 'until', label: 'Until (UTC)', type: 'datetime-local', hint: 'Empty: until now.', invalid: error?.param === 'until' })}
</div>
<div class="actions"><button type="submit">Recover</button></div>
</form>
</section>`;
}

function notificationsList(input: EndpointPageInput, now?: Date): Html {
  if (input.notifications.length === 0) return html``;
  return html`<section class="panel" aria-labelledby="notifications-title">
<h2 id="notifications-title">Notifications</h2>
<ul class="notifications">
${input.notifications.map(
  (note) => html`<li>
<p><strong>${note.subject}</strong> · ${time(note.created_at, { now })}${note.email_sent_at && note.email_to ? html` · emailed to ${note.email_to}` : ''}</p>
<details><summary>Message</summary><pre>${note.body}</pre></details>
</li>`,
)}
</ul>
</section>`;
}

export function endpointPage(ctx: PageContext, input: EndpointPageInput): Html {
  const { endpoint } = input;
  const writable = !readOnly(ctx);
  const otherError = input.error?.form === 'other' ? errorSummary(input.error.error) : '';
  return layout(ctx, {
    title: `Endpoint ${endpoint.url}`,
    section: 'endpoints',
    heading: html`<span class="muted">Endpoint</span> <span class="url">${endpoint.url}</span>`,
    body: html`${input.secret ? secretBox(input.secret) : ''}
${otherError}
${lifecycleNote(endpoint)}
${failingNote(endpoint, input, ctx.now)}
<dl class="facts">
<div><dt>Status</dt><dd>${endpointStatus(endpoint)}${endpoint.status === 'paused' && endpoint.paused_at != null ? html` <span class="muted">since ${stamp(endpoint.paused_at)}</span>` : ''}${endpoint.status === 'disabled' && endpoint.disabled_reason === 'gone' ? html` <span class="muted">(it answered 410 Gone)</span>` : ''}</dd></div>
<div><dt>Description</dt><dd>${endpoint.description ?? html`<span class="muted">None</span>`}</dd></div>
<div><dt>Events</dt><dd>${eventsSummary(endpoint, input.eventTypes)}</dd></div>
<div><dt>Order</dt><dd>${endpoint.ordering === 'parcel' ? 'In order per parcel' : html`<span class="muted">As they come</span>`}</dd></div>
<div><dt>Rate limit (per second)</dt><dd>${endpoint.rate_limit ?? html`<span class="muted">None</span>`}</dd></div>
<div><dt>API version</dt><dd><code>${versionLabel(endpoint.api_version ?? LATEST_API_VERSION)}</code> ${changesToNewest(endpoint.api_version ?? LATEST_API_VERSION)}</dd></div>
<div><dt>Created</dt><dd>${stamp(endpoint.created)}</dd></div>
<div><dt>ID</dt><dd><code>${endpoint.id}</code></dd></div>
</dl>
${input.health ? healthSection(ctx, endpoint.id, input.health) : ''}
<p><a class="button secondary" href="${paths.deliveries(ctx.mode, endpoint.id)}">Deliveries</a></p>
${writable ? actions(ctx, input) : ''}
${writable && input.features.change ? changeForm(ctx, input) : ''}
${writable && input.features.recover ? recoverForm(ctx, input) : ''}
${notificationsList(input, ctx.now)}`,
  });
}
