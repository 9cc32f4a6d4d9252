import { CUSTOM_HEADERS_NOTE, deliveryHeaders } from '../../core/delivery-headers';
import { errorSummary, selectField } from './components';
import { html, type Html } from './html';
import { csrfField, layout, readOnly } from './layout';
import type { EndpointView, FormError, PageContext } from './models';
import { paths } from './paths';

/** One event kind as the catalog shows it; the route builds these from the event schemas. */
export interface EventKindView {
  type: string;
  firesWhen: string;
  /** What `data` carries, e.g. `data.parcel`. */
  carries: string;
  /** The body's JSON Schema and an example body, both pretty-printed JSON. */
  schemaJson: string;
  exampleJson: string;
  /** Enabled endpoints of this mode subscribed to the kind: where a test event can go. */
  targets: Pick<EndpointView, 'id' | 'url'>[];
  /** Older API versions in which this kind has another shape: what differs, its schema and example. */
  olderVersions: { version: string; differences: string[]; schemaJson: string; exampleJson: string }[];
}

/** One API version as the page lists it. */
export interface ApiVersionView {
  name: string;
  latest: boolean;
  why: string;
  changes: { type: string; summary: string }[];
  /** YYYY-MM-DD from which it is no longer served; null while none is set. */
  sunset: string | null;
}

export interface EventTypesPageInput {
  kinds: EventKindView[];
  /** Newest first. */
  versions: ApiVersionView[];
  /** After a failed test event: the kind whose form failed, and why. */
  error?: { type: string; error: FormError };
}

/** The id an element of a kind's section gets: dots are valid in ids but awkward in CSS selectors and fragments. */
export const kindAnchor = (type: string) => `kind-${type.replace(/\./g, '-')}`;

function testForm(ctx: PageContext, kind: EventKindView, error: FormError | undefined): Html {
  if (readOnly(ctx)) return html``;
  const anchor = kindAnchor(kind.type);
  if (kind.targets.length === 0) {
    // A failed send can leave no target (the endpoint was just disabled): the error still shows.
    return html`${errorSummary(error)}<p class="muted">No enabled ${ctx.mode}-mode endpoint receives <code>${kind.type}</code>.
<a href="${paths.endpoints(ctx.mode)}">Add or change an endpoint</a> to send it a test event.</p>`;
  }
  return html`<form method="post" action="${paths.eventTypesTest(ctx.mode)}" class="row" aria-label="Send a test ${kind.type} event">
${errorSummary(error, { endpoint_id: `${anchor}-endpoint` })}
${csrfField(ctx.csrfToken)}
<input type="hidden" name="type" value="${kind.type}">
${selectField({
  id: `${anchor}-endpoint`,
  name: 'endpoint_id',
  label: 'Endpoint',
  options: kind.targets.map((endpoint) => ({ value: endpoint.id, label: endpoint.url })),
})}
<button type="submit">Send test event</button>
</form>`;
}

function kindSection(ctx: PageContext, kind: EventKindView, error: FormError | undefined): Html {
  const anchor = kindAnchor(kind.type);
  return html`<section class="panel event-kind" id="${anchor}" aria-labelledby="${anchor}-title">
<h2 id="${anchor}-title"><code>${kind.type}</code></h2>
<p>${kind.firesWhen} <span class="muted">Carries <code>${kind.carries}</code>.</span></p>
<details class="schema">
<summary>JSON Schema</summary>
<pre tabindex="0">${kind.schemaJson}</pre>
</details>
<h3>Example body</h3>
<pre class="example" tabindex="0">${kind.exampleJson}</pre>
${kind.olderVersions.map(
  (older) => html`<details class="older-version">
<summary>In API version ${older.version}</summary>
<ul>${older.differences.map((difference) => html`<li>${difference}</li>`)}</ul>
<pre tabindex="0">${older.schemaJson}</pre>
<pre class="older-example" tabindex="0">${older.exampleJson}</pre>
</details>`,
)}
${testForm(ctx, kind, error)}
</section>`;
}

function versionsSection(versions: ApiVersionView[]): Html {
  return html`<section class="panel api-versions" id="api-versions" aria-labelledby="api-versions-title">
<h2 id="api-versions-title">API versions</h2>
<p class="muted">Each endpoint receives its events in the API version it is pinned to (its <code>Service-Version</code> header).
The shapes below are the newest; a version older than it is served for at least 12 months after its successor.</p>
<dl>
${versions.map(
  (version) => html`<dt><code>${version.name}</code>${version.latest ? ' (newest)' : ''}${
    version.sunset === null ? '' : html` <strong>served until ${version.sunset}</strong>`
  }</dt>
<dd>${version.why}${
    version.changes.length === 0
      ? ''
      : html`<ul>${version.changes.map((change) => html`<li><code>${change.type}</code>: ${change.summary}</li>`)}</ul>`
  }</dd>`,
)}
</dl>
</section>`;
}

/** Text whose `backquoted` spans are code. */
function withCode(text: string): Html {
  return html`${text.split('`').map((part, index) => (index % 2 === 1 ? html`<code>${part}</code>` : part))}`;
}

function headersSection(): Html {
  return html`<section class="panel delivery-headers" id="delivery-headers" aria-labelledby="delivery-headers-title">
<h2 id="delivery-headers-title">Headers on every POST</h2>
<p class="muted">${withCode(CUSTOM_HEADERS_NOTE)}</p>
<dl>
${deliveryHeaders().map(
  (
    header,
  ) => html`<dt><code>${header.name}</code>${header.always ? '' : html` <span class="muted">(when its version has a sunset date)</span>`}</dt>
<dd>${withCode(header.description)}</dd>`,
)}
</dl>
</section>`;
}

export function eventTypesPage(ctx: PageContext, input: EventTypesPageInput): Html {
  return layout(ctx, {
    title: 'Event types',
    section: 'event-types',
    body: html`<p class="lede">The kinds of event the service posts to your endpoints: when each fires, the JSON Schema of
its body and an example. Every body is signed; verify it with the receiver kit, which types each kind.
A test event is a realistic example of its kind, delivered to the chosen endpoint only.</p>
<nav class="kind-index" aria-label="Event kinds"><ul>
${input.kinds.map((kind) => html`<li><a href="#${kindAnchor(kind.type)}"><code>${kind.type}</code></a></li>`)}
</ul></nav>
${versionsSection(input.versions)}
${headersSection()}
${input.kinds.map((kind) => kindSection(ctx, kind, input.error?.type === kind.type ? input.error.error : undefined))}`,
  });
}
