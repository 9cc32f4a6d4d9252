/**
 * Draws one bench result file as an SVG: deliveries/s of each phase under load, and the p50 and p99 of each
 * phase one at a time, each a bar at the median of the repetitions with a whisker from the min to the max.
 *
 *   npx tsx bench/plot.ts bench/results/<file>.json [out.svg]
 *
 * Default output: docs/performance/<file>.svg. No dependency: the SVG is written by hand. The plain POST loop is
 * left out of the throughput panel (it runs thousands a second and would flatten every other bar) and named in
 * the title instead.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

interface Stat {
  median: number;
  min: number;
  max: number;
}

interface Row {
  label: string;
  stats: Stat[];
}

type Steady = Record<string, { median?: { summary?: Record<string, Stat> } }>;

const COLORS = ['#3b6ea5', '#d9822b'];
export const FONT = 'font-family="system-ui, -apple-system, Segoe UI, sans-serif"';
const WIDTH = 760;
const LABEL_WIDTH = 250;
const ROW_HEIGHT = 30;

/** A readable name for a phase: `engine-load/all` -> `engine`, `bare-fanout-load` -> `bare Temporal, fan-out`. */
function phaseLabel(phase: string): string {
  const [kind] = phase.split('/');
  if (kind === 'bare-eager-idle') return "Temporal's eager floor";
  if (kind === 'plain-post') return 'plain signed POST';
  const who = kind?.startsWith('bare-') ? 'bare Temporal' : 'engine';
  return kind?.includes('fanout') ? `${who}, fan-out` : who;
}

function rowsOf(steady: Steady, prefix: string[], fields: string[]): Row[] {
  return Object.entries(steady)
    .filter(([phase]) => prefix.some((p) => phase === p || phase.startsWith(`${p}/`)))
    .map(([phase, result]) => ({ label: phaseLabel(phase), stats: fields.map((f) => result.median?.summary?.[f]) }))
    .filter((row): row is Row => row.stats.every((s) => s !== undefined));
}

export const esc = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
export const fmt = (n: number) => (n >= 100 ? n.toFixed(0) : n.toFixed(1));

/** A round axis end at or above `max` that splits into five round ticks. */
function niceMax(max: number): number {
  const power = 10 ** Math.floor(Math.log10(max || 1));
  return [1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10].map((m) => m * power).find((v) => v >= max) ?? 10 * power;
}

const tick = (v: number) => (Number.isInteger(v) ? String(v) : v.toFixed(1));

/** One horizontal bar chart panel; returns its SVG and height. */
function panel(
  title: string,
  unit: string,
  series: string[],
  rows: Row[],
  top: number,
): { svg: string; height: number } {
  const plotWidth = WIDTH - LABEL_WIDTH - 70;
  const bars = series.length;
  const rowHeight = ROW_HEIGHT * Math.max(1, bars * 0.75);
  const axisMax = niceMax(Math.max(...rows.flatMap((r) => r.stats.map((s) => s.max))));
  const x = (v: number) => LABEL_WIDTH + (v / axisMax) * plotWidth;
  const parts: string[] = [
    `<text x="10" y="${top + 18}" ${FONT} font-size="15" font-weight="600">${esc(title)}</text>`,
  ];
  const legendY = top + 36;
  series.forEach((name, i) => {
    const lx = LABEL_WIDTH + i * 160;
    parts.push(`<rect x="${lx}" y="${legendY - 10}" width="12" height="12" fill="${COLORS[i]}"/>`);
    parts.push(`<text x="${lx + 18}" y="${legendY}" ${FONT} font-size="12">${esc(name)}</text>`);
  });
  const chartTop = top + 50;
  const chartHeight = rows.length * rowHeight;
  for (let t = 0; t <= 5; t++) {
    const v = (axisMax * t) / 5;
    parts.push(`<line x1="${x(v)}" y1="${chartTop}" x2="${x(v)}" y2="${chartTop + chartHeight}" stroke="#ddd"/>`);
    parts.push(
      `<text x="${x(v)}" y="${chartTop + chartHeight + 15}" ${FONT} font-size="11" text-anchor="middle" fill="#555">${tick(v)}</text>`,
    );
  }
  parts.push(
    `<text x="${LABEL_WIDTH + plotWidth / 2}" y="${chartTop + chartHeight + 32}" ${FONT} font-size="12" text-anchor="middle" fill="#333">${esc(unit)}</text>`,
  );
  rows.forEach((row, r) => {
    const y0 = chartTop + r * rowHeight;
    parts.push(
      `<text x="${LABEL_WIDTH - 8}" y="${y0 + rowHeight / 2 + 4}" ${FONT} font-size="12" text-anchor="end">${esc(row.label)}</text>`,
    );
    const barHeight = (rowHeight - 8) / bars;
    row.stats.forEach((s, i) => {
      const by = y0 + 4 + i * barHeight;
      const mid = by + barHeight / 2;
      parts.push(
        `<rect x="${LABEL_WIDTH}" y="${by}" width="${x(s.median) - LABEL_WIDTH}" height="${barHeight - 2}" fill="${COLORS[i]}" opacity="0.85"/>`,
      );
      parts.push(`<line x1="${x(s.min)}" y1="${mid}" x2="${x(s.max)}" y2="${mid}" stroke="#222" stroke-width="1.2"/>`);
      for (const end of [s.min, s.max])
        parts.push(
          `<line x1="${x(end)}" y1="${mid - 4}" x2="${x(end)}" y2="${mid + 4}" stroke="#222" stroke-width="1.2"/>`,
        );
      parts.push(`<text x="${x(s.max) + 5}" y="${mid + 4}" ${FONT} font-size="11" fill="#222">${fmt(s.median)}</text>`);
    });
  });
  return { svg: parts.join('\n'), height: chartTop - top + chartHeight + 45 };
}

export interface BenchResult {
  steady?: Steady;
  machine?: { cpuModel?: string; cores?: number };
  server?: { kind?: string; historyShards?: number };
  startedAt?: string;
  settings?: { reps?: number; phaseMs?: number };
}

/** The Temporal server a run measured, in a few words. */
function serverLabel(server: BenchResult['server']): string {
  if (server?.historyShards !== undefined) return `full server (${server.historyShards} shards, Postgres)`;
  return server?.kind?.includes('start-dev') ? 'dev server (SQLite)' : 'Temporal server';
}

/** The SVG of one result file; the command line below writes it to a file. */
export function plotResults(result: BenchResult): string {
  const steady = result.steady ?? {};
  const load = rowsOf(steady, ['bare-load', 'engine-load', 'bare-fanout-load', 'engine-fanout-load'], ['perSecond']);
  const idle = rowsOf(steady, ['bare-idle', 'bare-eager-idle', 'engine-idle'], ['p50Ms', 'p99Ms']);
  const plain = steady['plain-post']?.median?.summary?.perSecond;
  const reps = result.settings?.reps ?? '?';
  const seconds = result.settings?.phaseMs ? result.settings.phaseMs / 1000 : '?';
  const machine = `${result.machine?.cores ?? '?'} cores (${result.machine?.cpuModel ?? 'unknown CPU'})`;
  const heading = `${result.startedAt?.slice(0, 10) ?? ''}, ${serverLabel(result.server)}: ${machine}, ${reps} repetitions of ${seconds} s; bars are medians, whiskers min-max`;
  let y = 34;
  const parts: string[] = [`<text x="10" y="20" ${FONT} font-size="12" fill="#444">${esc(heading)}</text>`];
  if (load.length > 0) {
    const title = `Under load: deliveries/s${plain ? ` (plain signed POST loop: ${fmt(plain.median)}/s, not drawn)` : ''}`;
    const p = panel(title, 'deliveries per second (higher is better)', ['deliveries/s'], load, y);
    parts.push(p.svg);
    y += p.height + 10;
  }
  if (idle.length > 0) {
    const p = panel(
      'One at a time: publish (or start) to the POST',
      'milliseconds (lower is better)',
      ['p50', 'p99'],
      idle,
      y,
    );
    parts.push(p.svg);
    y += p.height;
  }
  return svgDocument(WIDTH, y + 10, parts);
}

/** A standalone SVG file of `parts` on a white page. */
export function svgDocument(width: number, height: number, parts: string[]): string {
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">`,
    `<rect width="100%" height="100%" fill="#fff"/>`,
    ...parts,
    '</svg>',
    '',
  ].join('\n');
}

function main(): void {
  const [input, output] = process.argv.slice(2);
  if (!input) {
    process.stderr.write('usage: npx tsx bench/plot.ts bench/results/<file>.json [out.svg]\n');
    process.exit(2);
  }
  const out = output ?? path.join(__dirname, '..', 'docs', 'performance', `${path.basename(input, '.json')}.svg`);
  mkdirSync(path.dirname(out), { recursive: true });
  writeFileSync(out, plotResults(JSON.parse(readFileSync(input, 'utf8'))));
  process.stdout.write(`${out}\n`);
}

if (require.main === module) main();
