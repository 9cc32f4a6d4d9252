import {
  FACT_SETTINGS,
  factLabel,
  FORM_SETTINGS,
  formSpec,
  type FactSettingName,
  type FormSettingName,
  type SettingsFormValues,
} from '../../core/endpoint-settings';
import { API_VERSIONS, changesSince, LATEST_API_VERSION } from '../../core/versions';
import { healthSection } from './charts';
import { badge, checkboxGroup, confirmForm, errorSummary, field, selectField, shownOnce, table } from './components';
import { plural, stamp, time } from './format';
import { html, type Html } from './html';
import { csrfField, layout, readOnly } from './layout';
import type { EndpointHealthView, EndpointView, FormError, NotificationView, PageContext } from './models';
import { paths } from './paths';

/** The form's values by field name (core/endpoint-settings.ts): as typed, or as the endpoint has them. */
export type EndpointFormValues = SettingsFormValues;

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

interface FieldContext {
  prefix: string;
  values: EndpointFormValues;
  eventTypes: readonly string[];
  error?: FormError;
}

const controlId = (prefix: string, name: FormSettingName) => `${prefix}-${formSpec(name).id}`;

/** The error is this field's: its param is the field's name, or a part of it (`headers.X-Token`). */
const invalidFor = (name: FormSettingName, error?: FormError) =>
  error?.param === name || (error?.param?.startsWith(`${name}.`) ?? false);

/** A field of one input kind, from its declaration; a kind with choices has them from its setting (below). */
function standardField(name: FormSettingName, context: FieldContext): Html {
  const spec = formSpec(name);
  const id = controlId(context.prefix, name);
  const invalid = invalidFor(name, context.error);
  const value = context.values[name];
  switch (spec.input) {
    case 'checkbox':
      return html`<div class="check${invalid ? ' invalid' : ''}">
<input type="checkbox" id="${id}" name="${name}" value="${spec.checked ?? 'on'}" aria-describedby="${id}-hint"${value === true ? html` checked` : ''}>
<label for="${id}">${spec.label}</label>
<p class="hint" id="${id}-hint">${spec.hint ?? ''}</p>
</div>`;
    case 'lines':
      return html`<div class="field${invalid ? ' invalid' : ''}">
<label for="${id}">${spec.label}</label>
<textarea id="${id}" name="${name}" rows="3" aria-describedby="${id}-hint"${invalid ? html` aria-invalid="true"` : ''}>${typeof value === 'string' ? value : ''}</textarea>
<p class="hint" id="${id}-hint">${spec.hint ?? ''}</p>
</div>`;
    default:
      return field({
        id,
        name,
        label: spec.label,
        type: spec.input === 'url' ? 'url' : undefined,
        value: typeof value === 'string' ? value : '',
        required: spec.required,
        placeholder: spec.placeholder,
        hint: spec.hint,
        maxLength: spec.maxLength,
        invalid,
      });
  }
}

/** The fields whose choices come from elsewhere: the event kinds, the API versions. */
const FIELDS_WITH_CHOICES: Partial<Record<FormSettingName, (context: FieldContext) => Html>> = {
  events: (context) => {
    const spec = formSpec('events');
    const ticked = context.values.events ?? [];
    return checkboxGroup({
      legend: spec.label,
      name: 'events',
      idPrefix: controlId(context.prefix, 'events'),
      hint: spec.hint,
      invalid: invalidFor('events', context.error),
      options: context.eventTypes.map((kind) => ({ value: kind, label: kind, checked: ticked.includes(kind) })),
    });
  },
  api_version: (context) => apiVersionField(context.prefix, context.values.api_version ?? LATEST_API_VERSION),
};

/** Every setting the form asks for, in declaration order. */
function endpointFields(context: FieldContext): Html {
  return html`${FORM_SETTINGS.map(
    (name) => html`${(FIELDS_WITH_CHOICES[name] ?? ((c: FieldContext) => standardField(name, c)))(context)}
`,
  )}`;
}

/** Where the form's error summary links to, by field name: the control, or a group's first box. */
function fieldIds(prefix: string): Record<string, string> {
  return Object.fromEntries(
    FORM_SETTINGS.map((name) => [
      name,
      `${controlId(prefix, name)}${formSpec(name).input === 'checkboxes' ? '-0' : ''}`,
    ]),
  );
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
  const spec = formSpec('api_version');
  return html`${selectField({
    id: controlId(prefix, 'api_version'),
    name: 'api_version',
    label: spec.label,
    options: API_VERSIONS.map((version) => ({ value: version.name, label: versionLabel(version.name) })),
    selected,
    hint: spec.hint,
  })}
<div class="hint">${changesToNewest(selected)}</div>`;
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
${errorSummary(input.error, fieldIds('add'))}
${csrfField(ctx.csrfToken)}
${endpointFields({ prefix: 'add', values: input.form ?? {}, eventTypes: input.eventTypes, error: input.error })}
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
          events: all ? [] : [...endpoint.events],
          ordering: endpoint.ordering === formSpec('ordering').checked,
          rate_limit: endpoint.rate_limit?.toString() ?? '',
          api_version: endpoint.api_version,
        };
  const error = input.error?.form === 'change' ? input.error.error : undefined;
  return html`<section class="panel" aria-labelledby="change-title">
<h2 id="change-title">Change endpoint</h2>
<form method="post" action="${paths.endpointAction(ctx.mode, endpoint.id, 'update')}" class="stack" novalidate>
${errorSummary(error, fieldIds('change'))}
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

/** How the endpoint page's facts show each setting that has one (core/endpoint-settings.ts: page.fact). */
const FACTS: Record<FactSettingName, (endpoint: EndpointView, input: EndpointPageInput) => Html | string> = {
  status: (endpoint) =>
    html`${endpointStatus(endpoint)}${endpoint.status === 'paused' && endpoint.paused_at != null ? html` <span class="muted">since ${stamp(endpoint.paused_at)}</span>` : ''}${endpoint.status === 'disabled' && endpoint.disabled_reason === 'gone' ? html` <span class="muted">(it answered 410 Gone)</span>` : ''}`,
  description: (endpoint) => endpoint.description ?? html`<span class="muted">None</span>`,
  rate_limit: (endpoint) => endpoint.rate_limit?.toString() ?? html`<span class="muted">None</span>`,
  events: (endpoint, input) => eventsSummary(endpoint, input.eventTypes),
  ordering: (endpoint) =>
    endpoint.ordering === 'parcel' ? 'In order per parcel' : html`<span class="muted">As they come</span>`,
  api_version: (endpoint) =>
    html`<code>${versionLabel(endpoint.api_version ?? LATEST_API_VERSION)}</code> ${changesToNewest(endpoint.api_version ?? LATEST_API_VERSION)}`,
};

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
${FACT_SETTINGS.map(
  (name) => html`<div><dt>${factLabel(name)}</dt><dd>${FACTS[name](endpoint, input)}</dd></div>
`,
)}<div><dt>Created</dt><dd>${stamp(endpoint.created)}</dd></div>
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
