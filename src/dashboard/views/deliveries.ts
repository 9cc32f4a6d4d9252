import { badge, pager, table } from './components';
import { attemptError, duration, stamp } from './format';
import { html, type Html } from './html';
import { layout } from './layout';
import type { AttemptView, EndpointView, Mode, Page, PageContext, Trigger } from './models';
import { paths } from './paths';

const TRIGGERS: Record<Trigger, string> = {
  automatic: 'Automatic',
  resend: 'Resend',
  recover: 'Recover',
  test: 'Test',
};

export function triggerLabel(trigger: Trigger | undefined): string {
  return TRIGGERS[trigger ?? 'automatic'];
}

function responseCell(attempt: AttemptView): Html {
  if (attempt.response_body === null || attempt.response_body === '') return html`<span class="muted">Empty</span>`;
  // The record keeps the first 500 characters.
  const length = attempt.response_body.length;
  return html`<details><summary>Body, ${length}${length >= 500 ? '+' : ''} characters</summary><pre class="body">${attempt.response_body}</pre></details>`;
}

/** One row per attempt; the event column links to the event, the endpoint column when several endpoints mix. */
export function attemptRow(
  mode: Mode,
  attempt: AttemptView,
  options: { endpointUrl?: string; linkEvent?: boolean; showEvent?: boolean } = {},
): Html {
  const kind = html`<code>${attempt.event_type}</code>`;
  return html`<tr>
<td>${stamp(attempt.created)}</td>
${options.endpointUrl !== undefined ? html`<td class="url"><a href="${paths.endpoint(mode, attempt.endpoint_id)}">${options.endpointUrl}</a></td>` : ''}
${options.showEvent === false ? '' : html`<td>${options.linkEvent === false ? kind : html`<a href="${paths.event(mode, attempt.event_id)}">${kind}</a>`}<div class="muted small-text">${attempt.event_id}</div></td>`}
<td>${attempt.attempt}</td>
<td>${triggerLabel(attempt.trigger)}</td>
<td>${attempt.succeeded ? badge('Succeeded', 'ok') : badge('Failed', 'danger')}</td>
<td>${attempt.status_code ?? html`<span class="muted">None</span>`}</td>
<td>${duration(attempt.duration_ms)}</td>
<td>${attempt.reason ? `Given up: ${attempt.reason.replace(/_/g, ' ')}` : attemptError(attempt.error)}</td>
<td class="response">${responseCell(attempt)}</td>
</tr>`;
}

export const ATTEMPT_HEAD = [
  'Time',
  'Event',
  'Attempt',
  'Trigger',
  'Result',
  'Status code',
  'Duration',
  'Error',
  'Response',
];

export interface DeliveriesPageInput {
  endpoint: EndpointView;
  attempts: Page<AttemptView>;
  outcome?: 'succeeded' | 'failed';
  /** The cursor this page started after; absent on the first page. */
  startingAfter?: string;
}

export function deliveriesPage(ctx: PageContext, input: DeliveriesPageInput): Html {
  const { endpoint, attempts, outcome } = input;
  const last = attempts.data[attempts.data.length - 1];
  const option = (value: string, label: string) =>
    html`<option value="${value}"${(outcome ?? '') === value ? html` selected` : ''}>${label}</option>`;
  return layout(ctx, {
    title: `Deliveries to ${endpoint.url}`,
    section: 'endpoints',
    heading: html`<span class="muted">Deliveries to</span> <span class="url">${endpoint.url}</span>`,
    body: html`<p><a href="${paths.endpoint(ctx.mode, endpoint.id)}">Back to the endpoint</a></p>
<form method="get" action="${paths.deliveries(ctx.mode, endpoint.id)}" class="row filter">
<div class="field"><label for="outcome">Outcome</label>
<select id="outcome" name="outcome">${option('', 'All attempts')}${option('succeeded', 'Succeeded')}${option('failed', 'Failed')}</select></div>
<button type="submit" class="secondary">Filter</button>
</form>
${table({
  caption: 'Delivery attempts, newest first',
  head: ATTEMPT_HEAD,
  rows: attempts.data.map((attempt) =>
    attemptRow(ctx.mode, attempt, { linkEvent: !ctx.sections || ctx.sections.includes('events') }),
  ),
  empty: outcome
    ? `No ${outcome} attempts.`
    : 'Nothing delivered to this endpoint yet. Send it a test event from its page.',
})}
${pager({
  onFirstPage: input.startingAfter === undefined,
  firstHref: paths.deliveries(ctx.mode, endpoint.id, { outcome }),
  nextHref:
    attempts.hasMore && last ? paths.deliveries(ctx.mode, endpoint.id, { outcome, startingAfter: last.id }) : undefined,
})}`,
  });
}
