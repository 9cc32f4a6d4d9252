/**
 * Prints the tables docs/performance.md quotes, from one baseline result file, as markdown:
 *
 *   npx tsx bench/baseline-table.ts bench/results/baseline.json [--write docs/performance.md]
 *
 * With --write it replaces the tables between the doc's two markers (TABLES_START, TABLES_END) instead of
 * printing them. Every figure is a median of the repetitions, min-max beside the rates.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { PHASE, spreadAt, type Cost, type Ratios, type SteadyResults } from './figures';
import type { Spread } from './stats';

/**
 * Temporal Cloud's published pay-as-you-go price per million actions (the first 5 million of a month on the
 * Business plan and up, every million on the Developer plan), in effect since January 2025.
 */
export const CLOUD_USD_PER_MILLION_ACTIONS = 50;

export interface BaselineFile {
  startedAt?: string;
  finishedAt?: string;
  machine?: { cores?: number; cpuModel?: string };
  settings?: { reps?: number; phaseMs?: number; warmupMs?: number; concurrency?: number; fanOutEndpoints?: number };
  steady: SteadyResults;
  ratios?: Partial<Ratios>;
  cost?: Partial<Cost>;
  scenarios?: Record<string, unknown>;
}

const num = (n: number | undefined, digits = 1) =>
  n === undefined || !Number.isFinite(n)
    ? '-'
    : n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: 0 });

const withRange = (s: Spread | undefined) => (s ? `${num(s.median)} (${num(s.min)}-${num(s.max)})` : '-');

/** The steady phases: rate under load, its ratio to bare Temporal, CPU and actions per delivery, latency one at a time. */
function steadyTable(file: BaselineFile): string[] {
  const { steady } = file;
  const endpoints = file.settings?.fanOutEndpoints ?? 5;
  const cpu = (phase: string) => {
    const part = (k: string) => spreadAt(steady, phase, ['cpuMsPerDelivery', k])?.median;
    const total = part('totalMs');
    return total === undefined
      ? '-'
      : `${num(part('benchMs'), 2)} / ${num(part('temporalMs'), 2)} / ${num(part('postgresMs'), 2)} = **${num(total, 2)}**`;
  };
  const actions = (phase: string) => num(spreadAt(steady, phase, ['actionsPerDelivery', 'total'])?.median, 2);
  const idle = (phase: string) => {
    const p50 = spreadAt(steady, phase, ['summary', 'p50Ms'])?.median;
    const p99 = spreadAt(steady, phase, ['summary', 'p99Ms'])?.median;
    return p50 === undefined ? '-' : `${num(p50)} / ${num(p99)}`;
  };
  const vsBare = (r: number | undefined) => (r === undefined ? '-' : `**${num(r, 2)}x**`);
  const rows: Array<[string, string, string, string, string, string]> = [
    [
      'plain signed POST loop (no Temporal, no database)',
      withRange(spreadAt(steady, PHASE.plain, ['summary', 'perSecond'])),
      '-',
      cpu(PHASE.plain),
      '0',
      '-',
    ],
    [
      'bare Temporal: a workflow, one activity posting',
      withRange(spreadAt(steady, PHASE.bareLoad, ['summary', 'perSecond'])),
      '1x',
      cpu(PHASE.bareLoad),
      actions(PHASE.bareLoad),
      idle(PHASE.bareIdle),
    ],
    [
      'bare Temporal: a workflow that does nothing (start -> completed)',
      withRange(spreadAt(steady, PHASE.emptyLoad, ['summary', 'perSecond'])),
      '-',
      cpu(PHASE.emptyLoad),
      actions(PHASE.emptyLoad),
      '-',
    ],
    ["Temporal's eager floor (start -> the POST, one at a time)", '-', '-', '-', '-', idle(PHASE.eagerFloorIdle)],
    [
      '**engine** (publish -> the POST arrives)',
      withRange(spreadAt(steady, PHASE.engineLoad, ['summary', 'perSecond'])),
      vsBare(file.ratios?.all?.deliveriesPerSecondVsBareTemporal),
      cpu(PHASE.engineLoad),
      actions(PHASE.engineLoad),
      idle(PHASE.engineIdle),
    ],
    [
      `bare Temporal, fan-out: a workflow, ${endpoints} activities posting`,
      withRange(spreadAt(steady, PHASE.bareFanOut, ['summary', 'perSecond'])),
      '1x',
      cpu(PHASE.bareFanOut),
      actions(PHASE.bareFanOut),
      '-',
    ],
    [
      `**engine, fan-out** (every event to ${endpoints} endpoints)`,
      withRange(spreadAt(steady, PHASE.engineFanOut, ['summary', 'perSecond'])),
      vsBare(file.ratios?.fanOut?.deliveriesPerSecondVsBareTemporal),
      cpu(PHASE.engineFanOut),
      actions(PHASE.engineFanOut),
      '-',
    ],
  ];
  return [
    '| | deliveries/s under load, median (min-max) | vs bare Temporal | CPU ms per delivery: bench / Temporal / Postgres = total | Temporal Cloud actions per delivery | one at a time p50 / p99 ms |',
    '|---|---|---|---|---|---|',
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ];
}

/** What a million first-try deliveries cost on Temporal Cloud at the published price, actions only. */
function cloudTable(file: BaselineFile): string[] {
  const a = file.cost?.actionsPerDelivery ?? {};
  const endpoints = file.settings?.fanOutEndpoints ?? 5;
  const usd = (actions: number | undefined) =>
    actions === undefined ? '-' : `$${num(actions * CLOUD_USD_PER_MILLION_ACTIONS, 2)}`;
  const row = (label: string, actions: number | undefined) => `| ${label} | ${num(actions, 2)} | ${usd(actions)} |`;
  return [
    `| a million first-try deliveries | actions per delivery | at $${CLOUD_USD_PER_MILLION_ACTIONS} per million actions |`,
    '|---|---|---|',
    row('**engine**, one endpoint per event', a.engine),
    row('bare Temporal, one activity', a.bare),
    row(`**engine**, ${endpoints} endpoints per event`, a.engineFanOut),
    row(`bare Temporal, ${endpoints} activities`, a.bareFanOut),
  ];
}

type Obj = Record<string, unknown>;
const get = (o: unknown, ...path: string[]): unknown =>
  path.reduce<unknown>((n, k) => (n && typeof n === 'object' ? (n as Obj)[k] : undefined), o);
const n = (v: unknown) => (typeof v === 'number' ? v : undefined);

/** One line per scenario of the baseline, its headline figures. */
function scenarioTable(file: BaselineFile): string[] {
  const s = file.scenarios ?? {};
  const rows: string[] = [];
  if (s.ordering) {
    const o = s.ordering;
    rows.push(
      `| order per parcel (\`ordering\`) | ${num(n(get(o, 'parcels')), 0)} parcels x ${num(n(get(o, 'eventsPerParcel')), 0)} events: ${num(n(get(o, 'inversions')), 0)} inversions ordered (${num(n(get(o, 'unorderedInversions')), 0)} unordered); ${num(n(get(o, 'orderedPerSecond')))}/s ordered, ${num(n(get(o, 'unorderedPerSecond')))}/s unordered |`,
    );
  }
  if (s['rate-limit']) {
    const r = s['rate-limit'];
    rows.push(
      `| rate limit (\`rate-limit\`) | ${num(n(get(r, 'events')), 0)} queued at a limit of ${num(n(get(r, 'limit')), 0)}/s: drained at ${num(n(get(r, 'drainPerSecond')))}/s, at most ${num(n(get(r, 'maxInOneSecond')), 0)} in a second, ${num(n(get(r, 'secondsOverLimit')), 0)} seconds over; ${num(n(get(r, 'attemptsOnRecord')), 0)} attempts on record |`,
    );
  }
  if (s.charts) {
    const p99 = Object.values((get(s.charts, 'p99Ms') as Record<string, number> | undefined) ?? {});
    rows.push(
      `| developers page charts (\`charts\`) | ${num(n(get(s.charts, 'attempts')), 0)} attempts: slowest chart query p99 ${num(p99.length ? Math.max(...p99) : undefined, 2)} ms |`,
    );
  }
  if (s.backlog) {
    const b = s.backlog;
    rows.push(
      `| backlog (\`backlog\`) | ${num(n(get(b, 'events')), 0)} events in backoff: worker ${num(n(get(b, 'rssIdleMb')), 0)} MB idle, ${num(n(get(b, 'rssWaitingMb')), 0)} MB with them waiting; all delivered ${num(n(get(b, 'recoveredToAllDeliveredSeconds')))} s after the endpoint recovered |`,
    );
  }
  if (s['large-tables']) {
    const t = s['large-tables'];
    const reads = Object.values((get(t, 'reads') as Record<string, { p99Ms: number }> | undefined) ?? {}).map(
      (r) => r.p99Ms,
    );
    const scale = n(get(t, 'scale'));
    rows.push(
      `| big tables (\`large-tables\`${scale !== undefined ? `, scale ${scale}: ${num(scale * 10_000_000, 0)} attempts` : ''}) | slowest read p99 ${num(reads.length ? Math.max(...reads) : undefined, 2)} ms; publish p99 ${num(n(get(t, 'publishP99Ms')), 2)} ms (empty database ${num(n(get(t, 'publishP99MsEmpty')), 2)}); retention ${num(n(get(t, 'retentionRowsPerSecond')), 0)} events/s, publishes meanwhile p99 ${num(n(get(t, 'publishP99MsDuringRetention')), 2)} ms |`,
    );
  }
  return rows.length === 0 ? [] : ['| scenario | result |', '|---|---|', ...rows];
}

/** The markdown the docs quote, from one result file. */
export function baselineTables(file: BaselineFile): string {
  const s = file.settings ?? {};
  const machine = file.machine
    ? `${file.machine.cores ?? '?'} cores (${file.machine.cpuModel ?? 'unknown CPU'})`
    : 'an unknown machine';
  const minutes =
    file.startedAt && file.finishedAt
      ? Math.round((Date.parse(file.finishedAt) - Date.parse(file.startedAt)) / 60_000)
      : undefined;
  const cost = file.cost ?? {};
  const lines = [
    `${machine}; ${s.concurrency ?? 200} deliveries in flight under load; ${(s.warmupMs ?? 5000) / 1000} s warm-up and ${(s.phaseMs ?? 0) / 1000} s window per phase, ${s.reps ?? '?'} repetition${s.reps === 1 ? '' : 's'} interleaved${minutes !== undefined ? `; the whole run ${minutes} minutes` : ''}.`,
    '',
    ...steadyTable(file),
    '',
    `CPU per delivery against bare Temporal's (\`cost.cpuPerDeliveryVsBare\`): **${num(cost.cpuPerDeliveryVsBare, 2)}**; with fan-out ${num(cost.cpuPerDeliveryVsBareFanOut, 2)}. Unloaded p50 against bare Temporal's: ${num(file.ratios?.all?.unloadedP50VsBareTemporal, 3)}. Deliveries/s against an empty workflow's (\`ratios.all.deliveriesPerSecondVsEmptyWorkflow\`): ${num(file.ratios?.all?.deliveriesPerSecondVsEmptyWorkflow, 3)}.`,
    '',
    ...cloudTable(file),
  ];
  const scenarios = scenarioTable(file);
  if (scenarios.length > 0) lines.push('', ...scenarios);
  return `${lines.join('\n')}\n`;
}

export const TABLES_START = '<!-- baseline tables: npx tsx bench/baseline-table.ts bench/results/baseline.json -->';
export const TABLES_END = '<!-- end of baseline tables -->';

/** The doc with the text between its two markers replaced by `tables`; throws if the markers are not there once each. */
export function spliceTables(doc: string, tables: string): string {
  const start = doc.indexOf(TABLES_START);
  const end = doc.indexOf(TABLES_END);
  if (start < 0 || end < start || doc.indexOf(TABLES_START, start + 1) >= 0)
    throw new Error('the doc lacks the baseline tables markers, once each and in order');
  return `${doc.slice(0, start + TABLES_START.length)}\n${tables}${doc.slice(end)}`;
}

function main(): void {
  const args = process.argv.slice(2);
  const writeAt = args.indexOf('--write');
  const target = writeAt >= 0 ? args[writeAt + 1] : undefined;
  const input = args.find((a, i) => a !== '--write' && (writeAt < 0 || i !== writeAt + 1));
  if (!input || (writeAt >= 0 && !target)) {
    process.stderr.write(
      'usage: npx tsx bench/baseline-table.ts bench/results/baseline.json [--write docs/performance.md]\n',
    );
    process.exit(2);
  }
  const tables = baselineTables(JSON.parse(readFileSync(input, 'utf8')) as BaselineFile);
  if (target) writeFileSync(target, spliceTables(readFileSync(target, 'utf8'), tables));
  else process.stdout.write(tables);
}

if (require.main === module) main();
