import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { BenchContext } from '../engine';
import type { Steady } from '../phases';
import { spreadOver, type Spread } from '../stats';
import { workerProcessRounds, type WorkersRound } from './workers';

/** A round of the tracing scenario: the worker with tracing off or on. */
export interface TracingRound extends WorkersRound {
  tracing: boolean;
  /** OTLP export requests the collector received during the round's measured window. */
  exportRequests: number;
  exportKb: number;
}

export interface TracingResult {
  concurrency: number;
  windowSeconds: number;
  protocol: string;
  sampler: string;
  /** Medians over the rounds of each setting (every round is in `rounds`). */
  offPerSecond: number;
  onPerSecond: number;
  /** Deliveries/s with tracing on over off, same run: 1 costs nothing. */
  onVsOffPerSecond: number;
  offWorkerCpuMsPerDelivery: number;
  onWorkerCpuMsPerDelivery: number;
  /** The worker's CPU per delivery with tracing on over off. */
  onVsOffWorkerCpu: number;
  /** What the collector received per delivery with tracing on. */
  exportKbPerDelivery: number;
  perSecondSpread: { off: Spread; on: Spread };
  rounds: TracingRound[];
}

/** A collector stand-in on loopback: answers every OTLP/HTTP export with an empty success and counts them. */
async function startCollector(): Promise<{
  url: string;
  taken(): { requests: number; bytes: number };
  close(): Promise<void>;
}> {
  let requests = 0;
  let bytes = 0;
  const server = http.createServer((req, res) => {
    req.on('data', (chunk: Buffer) => (bytes += chunk.length));
    req.on('end', () => {
      requests++;
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    taken() {
      const counts = { requests, bytes };
      requests = 0;
      bytes = 0;
      return counts;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const PROTOCOL = 'http/protobuf';
/** BENCH_TRACING_SAMPLER and BENCH_TRACING_SAMPLER_ARG: the traced worker's sampler (default always_on). */
const SAMPLER = process.env.BENCH_TRACING_SAMPLER || 'always_on';
const SAMPLER_ARG = process.env.BENCH_TRACING_SAMPLER_ARG || undefined;

/**
 * `npm run bench -- tracing`: what OpenTelemetry tracing costs a worker. The production worker in a process of its
 * own, with the standard OTEL_* variables unset (no SDK starts) and set to export spans (OTLP/HTTP protobuf; every
 * trace by default, BENCH_TRACING_SAMPLER and _ARG to sample fewer) to a collector stand-in on loopback, alternated (off, on, on, off, ...) in one
 * run so the machine's drift falls on both. Reports deliveries/s and the worker's CPU per delivery each way, and
 * their ratios.
 */
export async function tracingScenario(
  ctx: BenchContext,
  steady: Steady,
  concurrency: number,
  reps: number,
  log: (msg: string) => void,
): Promise<TracingResult> {
  const collector = await startCollector();
  const traced: Record<string, string> = {
    OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: PROTOCOL,
    OTEL_TRACES_SAMPLER: SAMPLER,
    ...(SAMPLER_ARG === undefined ? {} : { OTEL_TRACES_SAMPLER_ARG: SAMPLER_ARG }),
    OTEL_SERVICE_NAME: 'parcel-webhooks-bench',
  };
  const settings = Array.from({ length: reps }, (_, rep) => (rep % 2 === 0 ? [false, true] : [true, false])).flat();
  const exports: { requests: number; bytes: number }[] = [];
  let rounds: WorkersRound[];
  try {
    rounds = await workerProcessRounds(
      ctx,
      steady,
      concurrency,
      settings.map((on) => ({ workers: 1, env: on ? traced : {} })),
      (round, n) => {
        log(
          `tracing round ${n + 1}/${settings.length}: ${settings[n] ? 'on' : 'off'} ${round.perSecond}/s p50 ${round.p50Ms} ms, worker CPU ${round.workerCpuMsPerDelivery} ms per delivery`,
        );
      },
      { onStart: () => void collector.taken(), onEnd: () => void exports.push(collector.taken()) },
    );
  } finally {
    await collector.close();
  }
  const measured: TracingRound[] = rounds.map((round, n) => ({
    ...round,
    tracing: settings[n] as boolean,
    exportRequests: exports[n]?.requests ?? 0,
    exportKb: Math.round((exports[n]?.bytes ?? 0) / 1024),
  }));
  const of = (on: boolean, pick: (r: TracingRound) => number) => spreadOver(measured, (r) => r.tracing === on, pick);
  const ratio = (a: number, b: number) => (b ? Math.round((a / b) * 1000) / 1000 : NaN);
  const off = of(false, (r) => r.perSecond);
  const on = of(true, (r) => r.perSecond);
  const offCpu = of(false, (r) => r.workerCpuMsPerDelivery).median;
  const onCpu = of(true, (r) => r.workerCpuMsPerDelivery).median;
  return {
    concurrency,
    windowSeconds: steady.windowMs / 1000,
    protocol: PROTOCOL,
    sampler: SAMPLER_ARG === undefined ? SAMPLER : `${SAMPLER} ${SAMPLER_ARG}`,
    offPerSecond: off.median,
    onPerSecond: on.median,
    onVsOffPerSecond: ratio(on.median, off.median),
    offWorkerCpuMsPerDelivery: offCpu,
    onWorkerCpuMsPerDelivery: onCpu,
    onVsOffWorkerCpu: ratio(onCpu, offCpu),
    exportKbPerDelivery: of(true, (r) => (r.count ? Math.round((r.exportKb / r.count) * 100) / 100 : NaN)).median,
    perSecondSpread: { off, on },
    rounds: measured,
  };
}
