import type { Supervisor } from './processes';
import type { Rng } from './rng';
import type { ChaosTemporal } from './temporal';
import { at, log, sleep } from './runtime';
import type { TcpProxy } from './wiring';

/**
 * The fault timeline: planned from the seed before the run (slots spread over the traffic, with jitter, never
 * overlapping), then played in order while events flow. Each fault is recorded with when it really started
 * and when the system was whole again, to explain what the receivers and the records show.
 */

export type FaultKind = 'worker_kill' | 'postgres_outage' | 'temporal_outage';

export interface PlannedFault {
  kind: FaultKind;
  /** ms after the traffic starts. */
  offsetMs: number;
  /** Outage length; for a kill, how long before a new worker is started. */
  holdMs: number;
  /** Temporal outage only: SIGKILL the worker this long into it; its supervisor restarts it at once, as systemd would. */
  workerKillAfterMs?: number;
  /** A kill only: which worker (0-based) when several run. */
  worker?: number;
}

export interface FaultRecord {
  kind: FaultKind;
  label: string;
  startedAt: number;
  /** The process is back (worker polling, Temporal serving) or the proxy passes connections again. */
  endedAt: number;
  /** For a kill: the worker's pid. */
  pid?: number;
}

export const POSTGRES_OUTAGE_MS = 10_000;
/** With several workers, one of them is SIGKILLed this often, whatever else is going on. */
export const WORKER_KILL_INTERVAL_MS = 10_000;
export const TEMPORAL_OUTAGE_MS = 18_000;

/** Where each fault falls, as a share of the traffic's span; jitter moves each by up to +-3 s. */
const SLOTS: Array<{ kind: FaultKind; share: number }> = [
  { kind: 'worker_kill', share: 0.1 },
  { kind: 'postgres_outage', share: 0.22 },
  { kind: 'worker_kill', share: 0.42 },
  { kind: 'temporal_outage', share: 0.52 },
  { kind: 'worker_kill', share: 0.8 },
  { kind: 'worker_kill', share: 0.93 },
];

/**
 * One worker: the slots above. Several: the outages of the slots above, and beside them a kill every
 * WORKER_KILL_INTERVAL_MS from the first interval to the end of the traffic, round robin over the workers from one
 * the seed picks, so each worker has (workers - 1) intervals to come back before its next kill.
 */
export function planFaults(rng: Rng, spanMs: number, workers = 1): PlannedFault[] {
  const several = workers > 1;
  const slots = several ? SLOTS.filter((slot) => slot.kind !== 'worker_kill') : SLOTS;
  const plan: PlannedFault[] = slots.map(({ kind, share }) => ({
    kind,
    offsetMs: Math.max(0, Math.round(share * spanMs + (rng.next() * 6_000 - 3_000))),
    holdMs:
      kind === 'postgres_outage'
        ? POSTGRES_OUTAGE_MS
        : kind === 'temporal_outage'
          ? TEMPORAL_OUTAGE_MS
          : rng.int(500, 3_000),
    ...(kind === 'temporal_outage' && !several ? { workerKillAfterMs: rng.int(3_000, 8_000) } : {}),
  }));
  if (!several) return plan;
  const first = rng.int(0, workers - 1);
  for (let n = 0, offsetMs = WORKER_KILL_INTERVAL_MS; offsetMs <= spanMs; n++, offsetMs += WORKER_KILL_INTERVAL_MS) {
    plan.push({ kind: 'worker_kill', offsetMs, holdMs: rng.int(500, 3_000), worker: (first + n) % workers });
  }
  return plan.sort((a, b) => a.offsetMs - b.offsetMs);
}

export function describePlan(plan: PlannedFault[]): string {
  return plan
    .map((f) => {
      const inner =
        f.workerKillAfterMs === undefined ? '' : `, worker killed ${(f.workerKillAfterMs / 1000).toFixed(1)} s in`;
      const which = f.worker === undefined ? '' : ` of worker-${f.worker + 1}`;
      return `${f.kind}${which} at +${(f.offsetMs / 1000).toFixed(1)}s (${(f.holdMs / 1000).toFixed(1)} s${inner})`;
    })
    .join(', ');
}

export interface FaultTargets {
  /** The workers, each kept running by its own supervisor; a single-worker run has one. */
  workers: Supervisor[];
  temporal: ChaosTemporal;
  proxy: TcpProxy;
  /** Runs while Temporal is down (the operator's publishes). */
  duringTemporalOutage?: () => Promise<void>;
}

async function play(fault: PlannedFault, targets: FaultTargets, nextKill: () => number): Promise<FaultRecord[]> {
  switch (fault.kind) {
    case 'worker_kill': {
      const worker = fault.worker === undefined ? workerOf(targets, 0) : scheduledTarget(targets.workers, fault.worker);
      if (!worker) {
        log(`worker kill of worker-${(fault.worker ?? 0) + 1} skipped: fewer than two workers are up`);
        return [];
      }
      await worker.ensureRunning();
      const pid = worker.pid;
      const startedAt = Date.now();
      const n = nextKill();
      await worker.kill();
      await sleep(fault.holdMs);
      await worker.ensureRunning();
      const name = targets.workers.length > 1 ? `${worker.label} ` : 'worker ';
      return [
        { kind: fault.kind, label: `${name}kill #${n} (pid ${pid ?? '?'})`, startedAt, endedAt: Date.now(), pid },
      ];
    }
    case 'postgres_outage': {
      const startedAt = Date.now();
      await targets.proxy.cut();
      log(`postgres: unreachable through the proxy (connections reset, new ones refused) for ${fault.holdMs / 1000} s`);
      await sleep(fault.holdMs);
      await targets.proxy.restore();
      log('postgres: reachable again');
      return [{ kind: fault.kind, label: 'postgres outage', startedAt, endedAt: Date.now() }];
    }
    case 'temporal_outage': {
      const startedAt = Date.now();
      await targets.temporal.stop();
      log(`temporal: down for ${fault.holdMs / 1000} s`);
      let kill: { pid: number | undefined; at: number; n: number } | undefined;
      const worker = workerOf(targets, 0);
      const killWorker = async (afterMs: number) => {
        await sleep(afterMs);
        kill = { pid: worker.pid, at: Date.now(), n: nextKill() };
        await worker.kill();
        void worker.ensureRunning();
      };
      // Runs beside the outage and may outlast it (a command waiting for Temporal): it never delays the restart.
      const beside = targets.duringTemporalOutage?.();
      await Promise.all([
        sleep(fault.holdMs),
        fault.workerKillAfterMs === undefined ? undefined : killWorker(fault.workerKillAfterMs),
      ]);
      await targets.temporal.start();
      await beside;
      const records: FaultRecord[] = [{ kind: fault.kind, label: 'temporal outage', startedAt, endedAt: Date.now() }];
      if (kill) {
        await worker.ensureRunning();
        records.push({
          kind: 'worker_kill',
          label: `worker kill #${kill.n} during the temporal outage (pid ${kill.pid ?? '?'})`,
          startedAt: kill.at,
          endedAt: Date.now(),
          pid: kill.pid,
        });
      }
      return records;
    }
  }
}

function workerOf(targets: FaultTargets, index = 0): Supervisor {
  const worker = targets.workers[index];
  if (!worker) throw new Error(`the plan kills worker ${index + 1}, but ${targets.workers.length} run`);
  return worker;
}

/**
 * Whom a scheduled kill takes: the planned worker if it is up, else the next one up in round-robin order. None
 * while fewer than two are up (the others still starting again): the schedule kills a worker of a running
 * cluster, it never leaves the cluster without one.
 */
export function scheduledTarget<W extends { pid: number | undefined }>(
  workers: readonly W[],
  planned: number,
): W | undefined {
  const up = workers.filter((w) => w.pid !== undefined);
  if (up.length < 2) return undefined;
  for (let i = 0; i < workers.length; i++) {
    const worker = workers[(planned + i) % workers.length] as W;
    if (worker.pid !== undefined) return worker;
  }
  return undefined;
}

/** A kill of one of several workers (planFaults' schedule), played beside the other faults rather than after them. */
const scheduled = (fault: PlannedFault) => fault.kind === 'worker_kill' && fault.worker !== undefined;

/**
 * Plays the timeline from `trafficStartedAt`; a fault that is due while the previous one still runs waits for it,
 * except the scheduled kills of several workers: each starts when due, even during an outage or while the worker
 * killed before it is still coming back. `stopped()` true (the run is being torn down) ends it before the next
 * fault.
 */
export async function runFaults(
  plan: PlannedFault[],
  targets: FaultTargets,
  trafficStartedAt: number,
  stopped: () => boolean,
): Promise<FaultRecord[]> {
  const records: FaultRecord[] = [];
  let kills = 0;
  const nextKill = () => ++kills;
  const timeline = async (faults: PlannedFault[], playing: Array<Promise<void>>, wait: boolean) => {
    for (const fault of faults) {
      await sleep(Math.max(0, trafficStartedAt + fault.offsetMs - Date.now()));
      if (stopped()) break;
      const done = play(fault, targets, nextKill).then((played) => {
        for (const record of played) {
          log(`fault done: ${record.label} from ${at(record.startedAt)} to ${at(record.endedAt)}`);
          records.push(record);
        }
      });
      if (wait) await done;
      else {
        // Awaited once the timeline ends; marked handled now so a refusal while stopping is no unhandled rejection.
        done.catch(() => undefined);
        playing.push(done);
      }
    }
  };
  const beside: Array<Promise<void>> = [];
  await Promise.all([
    timeline(
      plan.filter((f) => !scheduled(f)),
      [],
      true,
    ),
    timeline(plan.filter(scheduled), beside, false),
  ]);
  await Promise.all(beside);
  return records.sort((a, b) => a.startedAt - b.startedAt);
}

/** Labels of the faults under way at `t` (or ended less than `graceMs` before it). */
export function faultsAt(records: FaultRecord[], t: number, graceMs = 5_000): string[] {
  return records.filter((r) => t >= r.startedAt && t <= r.endedAt + graceMs).map((r) => r.label);
}
