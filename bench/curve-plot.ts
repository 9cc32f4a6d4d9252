/**
 * Draws the latency curve of a result file (`scenarios.curve`, bench/scenarios/curve.ts) as an SVG: p99 (solid)
 * and p50 (dashed) from the scheduled send to the first attempt against the offered rate, one colour per
 * system, both axes logarithmic, with the 100 ms line of the headline. A hollow mark is a saturated step; an
 * endless latency (more sends than the percentile allows never arrived) sits on the top edge.
 *
 *   npx tsx bench/curve-plot.ts bench/results/curve.json [out.svg]
 *
 * Default output: docs/performance/curve.svg.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { scaleLog } from 'd3-scale';
import { line } from 'd3-shape';
import { HEADLINE_P99_MS, saturated, type CurvePoint } from './open-loop';
import { esc, fmt, FONT, svgDocument, type BenchResult } from './plot';
import type { CurveResult } from './scenarios/curve';

const WIDTH = 760;
const HEIGHT = 460;
const MARGIN = { top: 64, right: 170, bottom: 48, left: 70 };
const SYSTEMS: Array<{ key: keyof CurveResult['points']; label: string; color: string }> = [
  { key: 'engine', label: 'engine as shipped', color: '#3b6ea5' },
  { key: 'bare', label: 'bare Temporal', color: '#d9822b' },
  { key: 'plainPost', label: 'plain signed POST', color: '#5a9e5a' },
];

/** 1, 2 and 5 times each power of ten: the labelled ticks of a log axis. */
const labelled = (v: number) => [1, 2, 5].includes(Math.round(v / 10 ** Math.floor(Math.log10(v) + 1e-9)));
const rateOf = (n: number | null) => (n === null ? 'none' : `${n}/s`);
const msLabel = (v: number | null) => (typeof v === 'number' && Number.isFinite(v) ? `${fmt(v)} ms` : 'endless');
const msTick = (v: number) => (v >= 1000 ? `${v / 1000} s` : `${v} ms`);

export function plotCurve(result: BenchResult & { scenarios?: { curve?: CurveResult } }): string {
  const curve = result.scenarios?.curve;
  if (!curve) throw new Error('plot: the result file has no scenarios.curve');
  const all = SYSTEMS.flatMap((s) => curve.points[s.key]);
  const latencies = all.flatMap((p) => [p.p50Ms, p.p99Ms]).filter((v) => Number.isFinite(v) && v > 0);
  const x = scaleLog()
    .domain([Math.min(...all.map((p) => p.offeredPerSecond)), Math.max(...all.map((p) => p.offeredPerSecond))])
    .range([MARGIN.left, WIDTH - MARGIN.right])
    .nice();
  const y = scaleLog()
    .domain([Math.min(1, ...latencies), Math.max(HEADLINE_P99_MS * 2, ...latencies)])
    .range([HEIGHT - MARGIN.bottom, MARGIN.top])
    .nice();
  const [left, right] = x.range() as [number, number];
  const [bottom, top] = y.range() as [number, number];
  const parts: string[] = [];
  const { engineRateAtP99Under100Ms: engine, bareRateAtP99Under100Ms: bare } = curve;
  const ratio = engine !== null && bare ? ` (${(engine / bare).toFixed(1)}x)` : '';
  const machine = `${result.machine?.cores ?? '?'} cores (${result.machine?.cpuModel ?? 'unknown CPU'})`;
  parts.push(
    `<text x="10" y="20" ${FONT} font-size="12" fill="#444">${esc(`${result.startedAt?.slice(0, 10) ?? ''}: ${machine}, open loop, ${curve.settings.stepSeconds} s per rate after ${curve.settings.warmupSeconds} s warm-up`)}</text>`,
  );
  parts.push(
    `<text x="10" y="42" ${FONT} font-size="15" font-weight="600">${esc(`Highest rate with p99 at or under ${HEADLINE_P99_MS} ms: engine ${rateOf(engine)}, bare Temporal ${rateOf(bare)}${ratio}`)}</text>`,
  );
  for (const v of x.ticks().filter(labelled)) {
    parts.push(`<line x1="${x(v)}" y1="${top}" x2="${x(v)}" y2="${bottom}" stroke="#e3e3e3"/>`);
    parts.push(
      `<text x="${x(v)}" y="${bottom + 15}" ${FONT} font-size="11" text-anchor="middle" fill="#555">${v}</text>`,
    );
  }
  for (const v of y.ticks().filter(labelled)) {
    parts.push(`<line x1="${left}" y1="${y(v)}" x2="${right}" y2="${y(v)}" stroke="#e3e3e3"/>`);
    parts.push(
      `<text x="${left - 6}" y="${y(v) + 4}" ${FONT} font-size="11" text-anchor="end" fill="#555">${msTick(v)}</text>`,
    );
  }
  parts.push(
    `<line x1="${left}" y1="${y(HEADLINE_P99_MS)}" x2="${right}" y2="${y(HEADLINE_P99_MS)}" stroke="#b22" stroke-dasharray="2 3"/>`,
  );
  parts.push(
    `<text x="${right - 4}" y="${y(HEADLINE_P99_MS) - 5}" ${FONT} font-size="11" text-anchor="end" fill="#b22">${HEADLINE_P99_MS} ms</text>`,
  );
  parts.push(
    `<rect x="${left}" y="${top}" width="${right - left}" height="${bottom - top}" fill="none" stroke="#999"/>`,
  );
  parts.push(
    `<text x="${(left + right) / 2}" y="${HEIGHT - 10}" ${FONT} font-size="12" text-anchor="middle" fill="#333">offered rate, per second (log)</text>`,
  );
  parts.push(
    `<text transform="translate(18 ${(top + bottom) / 2}) rotate(-90)" ${FONT} font-size="12" text-anchor="middle" fill="#333">time from the scheduled send to the first attempt (log)</text>`,
  );
  const clampY = (v: number) => y(Math.min(Math.max(v, y.domain()[0] as number), y.domain()[1] as number));
  SYSTEMS.forEach((system, i) => {
    const points = curve.points[system.key];
    for (const [field, dash] of [
      ['p99Ms', ''],
      ['p50Ms', ' stroke-dasharray="5 4"'],
    ] as const) {
      // An endless latency (over 1% never arrived; null in JSON) is drawn at the top edge.
      const at = (p: CurvePoint) => clampY(typeof p[field] === 'number' ? p[field] : Infinity);
      const drawn = points;
      const d = line<CurvePoint>()
        .x((p) => x(p.offeredPerSecond))
        .y(at)(drawn);
      if (d) parts.push(`<path d="${d}" fill="none" stroke="${system.color}" stroke-width="2"${dash}/>`);
      for (const p of drawn) {
        const fill = saturated(p) ? '#fff' : system.color;
        parts.push(
          `<circle cx="${x(p.offeredPerSecond)}" cy="${at(p)}" r="3" fill="${fill}" stroke="${system.color}" stroke-width="1.5"><title>${esc(`${system.label} at ${p.offeredPerSecond}/s offered: ${p.achievedPerSecond}/s achieved, p50 ${msLabel(p.p50Ms)}, p99 ${msLabel(p.p99Ms)}${p.notArrived ? `, ${p.notArrived} never arrived` : ''}`)}</title></circle>`,
        );
      }
    }
    const ly = top + 10 + i * 22;
    parts.push(
      `<line x1="${right + 14}" y1="${ly}" x2="${right + 40}" y2="${ly}" stroke="${system.color}" stroke-width="2"/>`,
    );
    parts.push(`<text x="${right + 46}" y="${ly + 4}" ${FONT} font-size="12">${esc(system.label)}</text>`);
  });
  const ky = top + 10 + SYSTEMS.length * 22 + 10;
  parts.push(`<line x1="${right + 14}" y1="${ky}" x2="${right + 40}" y2="${ky}" stroke="#555" stroke-width="2"/>`);
  parts.push(`<text x="${right + 46}" y="${ky + 4}" ${FONT} font-size="12">p99</text>`);
  parts.push(
    `<line x1="${right + 14}" y1="${ky + 20}" x2="${right + 40}" y2="${ky + 20}" stroke="#555" stroke-width="2" stroke-dasharray="5 4"/>`,
  );
  parts.push(`<text x="${right + 46}" y="${ky + 24}" ${FONT} font-size="12">p50</text>`);
  parts.push(`<circle cx="${right + 27}" cy="${ky + 42}" r="3" fill="#fff" stroke="#555" stroke-width="1.5"/>`);
  parts.push(`<text x="${right + 46}" y="${ky + 46}" ${FONT} font-size="12">saturated step</text>`);
  return svgDocument(WIDTH, HEIGHT, parts);
}

function main(): void {
  const [input, output] = process.argv.slice(2);
  if (!input) {
    process.stderr.write('usage: npx tsx bench/curve-plot.ts bench/results/curve.json [out.svg]\n');
    process.exit(2);
  }
  const out = output ?? path.join(__dirname, '..', 'docs', 'performance', 'curve.svg');
  mkdirSync(path.dirname(out), { recursive: true });
  writeFileSync(out, plotCurve(JSON.parse(readFileSync(input, 'utf8'))));
  process.stdout.write(`${out}\n`);
}

if (require.main === module) main();
