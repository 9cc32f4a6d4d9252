import { scaleBand, scaleLinear } from 'd3-scale';
import { area, curveStepAfter, stack } from 'd3-shape';
import { html, type Html } from './html';
import type { EndpointHealthView, HourCountsView, OutcomeTotalsView, PageContext } from './models';
import { paths } from './paths';

/**
 * Delivery charts drawn on the server as SVG: attempts per UTC hour stacked by outcome, and a small sparkline.
 * Scales and shapes come from d3-scale and d3-shape; colours come from classes in app.css (the CSP allows no
 * style attribute). Every chart has a text alternative: a sentence, and a table of its numbers. Hour labels are
 * written in UTC with their instant in `data-hour`; app.js rewrites them in the reader's time zone.
 */

const OUTCOMES = ['succeeded', 'failed', 'abandoned'] as const;
type Outcome = (typeof OUTCOMES)[number];
export const OUTCOME_LABELS: Record<Outcome, string> = {
  succeeded: 'Succeeded',
  failed: 'Failed attempt',
  abandoned: 'Abandoned',
};

const WIDTH = 960;
const HEIGHT = 300;
const MARGIN = { top: 20, right: 12, bottom: 40, left: 60 };

export function percent(rate: number | null): string {
  if (rate === null) return 'No attempts';
  const value = rate * 100;
  return `${value === 100 || value === 0 ? value.toFixed(0) : value.toFixed(1)}%`;
}

export function milliseconds(ms: number | null): string {
  return ms === null ? 'no answers' : ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}

const utcTime = (hour: Date) => hour.toISOString().slice(11, 16);
const utcDay = (hour: Date) => hour.toLocaleDateString('en-GB', { timeZone: 'UTC', weekday: 'short', day: 'numeric' });

/** "In the last 24 hours, 120 attempts: 110 succeeded (91.7%), ..." */
export function summarySentence(
  health: Pick<EndpointHealthView, 'totals' | 'p50Ms' | 'p95Ms'>,
  period: string,
): string {
  const { totals } = health;
  if (totals.attempts === 0) return `No delivery attempts in the ${period}.`;
  const attempts = `${totals.attempts} attempt${totals.attempts === 1 ? '' : 's'}`;
  const answers =
    health.p50Ms === null
      ? 'No answers were received.'
      : `Response time: median ${milliseconds(health.p50Ms)}, 95th percentile ${milliseconds(health.p95Ms)}.`;
  return `In the ${period}, ${attempts}: ${totals.succeeded} succeeded (${percent(totals.successRate)}), ${totals.failed} failed and ${totals.failed === 1 ? 'was' : 'were'} retried, ${totals.abandoned} abandoned. ${answers}`;
}

/** Which hours get an axis label: every 6 hours over a day, midnight UTC over a week. */
function ticks(hours: readonly HourCountsView[], daily: boolean): HourCountsView[] {
  return hours.filter((row) => (daily ? row.hour.getUTCHours() === 0 : row.hour.getUTCHours() % 6 === 0));
}

function bars(
  hours: readonly HourCountsView[],
  x: (hour: string) => number | undefined,
  width: number,
  y: (value: number) => number,
): Html[] {
  const layers = stack<HourCountsView, Outcome>().keys(OUTCOMES)(hours as HourCountsView[]);
  return layers.flatMap((layer) =>
    layer
      .filter((point) => point[1] > point[0])
      .map((point) => {
        const left = x(point.data.hour.toISOString()) ?? 0;
        return html`<rect class="bar bar-${layer.key}" x="${left.toFixed(1)}" y="${y(point[1]).toFixed(1)}" width="${width.toFixed(1)}" height="${(y(point[0]) - y(point[1])).toFixed(1)}"></rect>`;
      }),
  );
}

function hourTable(id: string, hours: readonly HourCountsView[], caption: string): Html {
  return html`<details class="chart-table"><summary>Show the numbers as a table</summary>
<div class="table-wrap" role="region" aria-labelledby="${id}-table-caption" tabindex="0"><table>
<caption id="${id}-table-caption">${caption}</caption>
<thead><tr><th scope="col">Hour starting</th>${OUTCOMES.map((outcome) => html`<th scope="col">${OUTCOME_LABELS[outcome]}</th>`)}</tr></thead>
<tbody>${hours.map(
    (row) =>
      html`<tr><th scope="row"><time datetime="${row.hour.toISOString()}" data-local="hour">${row.hour.toISOString().slice(0, 16).replace('T', ' ')} UTC</time></th><td>${row.succeeded}</td><td>${row.failed}</td><td>${row.abandoned}</td></tr>`,
  )}</tbody>
</table></div>
</details>`;
}

export function legend(): Html {
  return html`<ul class="chart-legend">${OUTCOMES.map((outcome) => html`<li><span class="swatch swatch-${outcome}" aria-hidden="true"></span>${OUTCOME_LABELS[outcome]}</li>`)}</ul>`;
}

/** Attempts per hour stacked by outcome, with its axis, legend, sentence and table. */
export function hourlyChart(input: { id: string; title: string; period: string; health: EndpointHealthView }): Html {
  const { id, health } = input;
  const daily = health.hours.length > 48;
  const x = scaleBand<string>()
    .domain(health.hours.map((row) => row.hour.toISOString()))
    .range([MARGIN.left, WIDTH - MARGIN.right])
    .paddingInner(daily ? 0.1 : 0.2);
  const peak = Math.max(1, ...health.hours.map((row) => row.succeeded + row.failed + row.abandoned));
  const y = scaleLinear()
    .domain([0, peak])
    .nice(4)
    .range([HEIGHT - MARGIN.bottom, MARGIN.top]);
  const yTicks = y.ticks(4).filter((value) => Number.isInteger(value));
  const sentence = summarySentence(health, input.period);
  return html`<figure class="chart" id="${id}">
<svg class="chart-svg" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-labelledby="${id}-title" aria-describedby="${id}-summary">
<title id="${id}-title">${input.title}</title>
${yTicks.map(
  (value) =>
    html`<g class="grid"><line x1="${MARGIN.left}" x2="${WIDTH - MARGIN.right}" y1="${y(value).toFixed(1)}" y2="${y(value).toFixed(1)}"></line><text class="axis-label" x="${MARGIN.left - 6}" y="${y(value).toFixed(1)}" text-anchor="end" dominant-baseline="middle">${value}</text></g>`,
)}
${bars(health.hours, (hour) => x(hour), x.bandwidth(), y)}
${ticks(health.hours, daily)
  // A label starting near the right edge would be cut off.
  .filter((row) => (x(row.hour.toISOString()) ?? 0) < WIDTH - MARGIN.right - 70)
  .map(
    (row) =>
      html`<text class="axis-label" x="${(x(row.hour.toISOString()) ?? 0).toFixed(1)}" y="${HEIGHT - 10}" data-hour="${row.hour.toISOString()}" data-format="${daily ? 'day' : 'time'}">${daily ? utcDay(row.hour) : utcTime(row.hour)}</text>`,
  )}
</svg>
<figcaption><p id="${id}-summary" class="chart-summary">${sentence}</p>
${legend()}
<p class="muted small-text" data-zone-note>Hours in UTC.</p></figcaption>
${hourTable(id, health.hours, `${input.title}: attempts per hour`)}
</figure>`;
}

const SPARK_WIDTH = 120;
const SPARK_HEIGHT = 32;

/** A day of attempts in a word-sized picture: successes below, failures (retried or abandoned) stacked above. */
export function sparkline(hours: readonly HourCountsView[], totals: OutcomeTotalsView, label: string): Html {
  const points = hours.map((row, index) => ({ index, ok: row.succeeded, bad: row.failed + row.abandoned }));
  // One more point at the end so the last hour's step has a width.
  const last = points[points.length - 1];
  if (last) points.push({ ...last, index: last.index + 1 });
  const x = scaleLinear()
    .domain([0, Math.max(1, hours.length)])
    .range([0, SPARK_WIDTH]);
  const peak = Math.max(1, ...points.map((point) => point.ok + point.bad));
  const y = scaleLinear()
    .domain([0, peak])
    .range([SPARK_HEIGHT - 1, 1]);
  const layers = stack<(typeof points)[number], 'ok' | 'bad'>().keys(['ok', 'bad'])(points);
  const shape = area<[number, number] & { data: (typeof points)[number] }>()
    .x((point) => x(point.data.index))
    .y0((point) => y(point[0]))
    .y1((point) => y(point[1]))
    .curve(curveStepAfter);
  const failures = totals.failed + totals.abandoned;
  const name = `${label}: ${totals.attempts} attempt${totals.attempts === 1 ? '' : 's'} in the last 24 hours${totals.attempts ? `, ${failures} failed` : ''}`;
  return html`<svg class="sparkline" viewBox="0 0 ${SPARK_WIDTH} ${SPARK_HEIGHT}" role="img" aria-label="${name}" preserveAspectRatio="none">
<line class="spark-base" x1="0" x2="${SPARK_WIDTH}" y1="${SPARK_HEIGHT - 0.5}" y2="${SPARK_HEIGHT - 0.5}"></line>
${layers.map((layer) => html`<path class="spark-${layer.key}" d="${shape(layer as never) ?? ''}"></path>`)}
</svg>`;
}

const WINDOW_LABELS = { '24h': 'Last 24 hours', '7d': 'Last 7 days' } as const;

/** The chart of the endpoint's deliveries and the switch between its two windows: two links, no script. */
export function healthSection(ctx: PageContext, endpointId: string, health: EndpointHealthView): Html {
  const link = (window: '24h' | '7d') =>
    html`<a href="${paths.endpoint(ctx.mode, endpointId, { window: window === '24h' ? undefined : window })}#delivery-health"${window === health.window ? html` aria-current="page"` : ''}>${WINDOW_LABELS[window]}</a>`;
  const period = health.window === '24h' ? 'last 24 hours' : 'last 7 days';
  const { totals } = health;
  return html`<section class="panel" id="delivery-health" aria-labelledby="health-title">
<div class="panel-head"><h2 id="health-title">Deliveries</h2>
<nav class="segmented" aria-label="Chart period">${link('24h')}${link('7d')}</nav></div>
<dl class="stats">
<div><dt>Success rate</dt><dd>${totals.successRate === null ? html`<span class="muted">No attempts</span>` : percent(totals.successRate)}</dd></div>
<div><dt>Attempts</dt><dd>${totals.attempts}</dd></div>
<div><dt>Response time, median</dt><dd>${health.p50Ms === null ? html`<span class="muted">None</span>` : `${health.p50Ms} ms`}</dd></div>
<div><dt>Response time, 95th percentile</dt><dd>${health.p95Ms === null ? html`<span class="muted">None</span>` : `${health.p95Ms} ms`}</dd></div>
</dl>
${hourlyChart({ id: 'health-chart', title: `Delivery attempts per hour, ${period}`, period, health })}
</section>`;
}
