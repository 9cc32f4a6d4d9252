import { percent, sparkline } from './charts';
import { endpointStatus } from './endpoints';
import { plural } from './format';
import { html, type Html } from './html';
import { layout } from './layout';
import type { EndpointSummaryView, PageContext } from './models';
import { paths } from './paths';

/**
 * The home page of a mode: every endpoint with its status, its success rate over the last 24 hours and a
 * sparkline of that day, failing endpoints first, so "is anything wrong?" is answered without opening one.
 */

export interface OverviewPageInput {
  endpoints: EndpointSummaryView[];
}

function failing(summary: EndpointSummaryView): boolean {
  return summary.endpoint.status === 'failing' || summary.endpoint.failing === true;
}

/** Failing endpoints first, then the lowest success rate, endpoints without attempts and disabled ones last. */
export function overviewOrder(summaries: readonly EndpointSummaryView[]): EndpointSummaryView[] {
  const rank = (summary: EndpointSummaryView) =>
    failing(summary) ? 0 : summary.endpoint.status === 'disabled' ? 2 : 1;
  const rate = (summary: EndpointSummaryView) => summary.totals.successRate ?? 2;
  return summaries
    .map((summary, index) => ({ summary, index }))
    .sort((a, b) => rank(a.summary) - rank(b.summary) || rate(a.summary) - rate(b.summary) || a.index - b.index)
    .map(({ summary }) => summary);
}

/** One endpoint as a card: its address, three facts and the day's sparkline; reads as a list on a phone too. */
function card(ctx: PageContext, summary: EndpointSummaryView): Html {
  const { endpoint, totals } = summary;
  const failures = totals.failed + totals.abandoned;
  const low = totals.successRate !== null && totals.successRate < 0.95;
  return html`<li class="overview-item">
<div class="overview-endpoint"><a class="url" href="${paths.endpoint(ctx.mode, endpoint.id)}">${endpoint.url}</a>${endpoint.description ? html`<div class="muted">${endpoint.description}</div>` : ''}</div>
<dl class="overview-facts">
<div><dt>Status</dt><dd>${endpointStatus(endpoint)}</dd></div>
<div><dt>Success, 24 h</dt><dd class="${low ? 'rate-low' : ''}">${totals.successRate === null ? html`<span class="muted">No attempts</span>` : percent(totals.successRate)}</dd></div>
<div><dt>Attempts, 24 h</dt><dd>${totals.attempts}${failures > 0 ? html` <span class="muted small-text">(${failures} failed)</span>` : ''}</dd></div>
</dl>
<div class="overview-spark">${sparkline(summary.hours, totals, endpoint.url)}</div>
</li>`;
}

export function overviewPage(ctx: PageContext, input: OverviewPageInput): Html {
  const ordered = overviewOrder(input.endpoints);
  const failingCount = ordered.filter(failing).length;
  const empty = html`No ${ctx.mode} endpoints yet. <a href="${paths.endpoints(ctx.mode)}">Add an endpoint</a> to receive events, and
create an <a href="${paths.keys(ctx.mode)}">API key</a> to call the API.`;
  return layout(ctx, {
    title: 'Overview',
    section: 'overview',
    body: html`${
      failingCount > 0
        ? html`<div class="banner banner-danger" role="note"><strong>${plural(failingCount, 'endpoint is', 'endpoints are')} failing.</strong> ${failingCount === 1 ? 'It is' : 'They are'} listed first; open one to see its deliveries.</div>`
        : ''
    }
<p class="lede">How your ${ctx.mode}-mode endpoints did over the last 24 hours. Open one for its hourly chart and its deliveries.</p>
${
  ordered.length === 0
    ? html`<p class="empty">${empty}</p>`
    : html`<h2 id="overview-list-title">${ctx.mode === 'test' ? 'Test' : 'Live'} endpoints, failing first</h2>
<ul class="overview-list" aria-labelledby="overview-list-title">${ordered.map((summary) => card(ctx, summary))}</ul>`
}
<ul class="quick-links">
<li><a href="${paths.endpoints(ctx.mode)}">Manage endpoints</a></li>
<li><a href="${paths.events(ctx.mode, { deliveryState: 'not_delivered' })}">Events not delivered</a></li>
</ul>`,
  });
}
