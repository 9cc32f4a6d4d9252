import { describe, expect, it } from 'vitest';
import { MAX_WORKERS, parseArgs } from '../../chaos/args';
import {
  planFaults,
  scheduledTarget,
  POSTGRES_OUTAGE_MS,
  TEMPORAL_OUTAGE_MS,
  WORKER_KILL_INTERVAL_MS,
  type PlannedFault,
} from '../../chaos/faults';
import { createRng } from '../../chaos/rng';
import { apiFor } from '../../chaos/traffic';

const SPAN_MS = 110_000;

describe('chaos --workers', () => {
  it('defaults to one worker and reads N in both spellings', () => {
    expect(parseArgs([])).toMatchObject({ workers: 1 });
    expect(parseArgs(['--cluster', '--workers', '3'])).toMatchObject({ cluster: true, workers: 3 });
    expect(parseArgs(['--workers=2', '--seed', '7'])).toMatchObject({ workers: 2, seed: 7 });
  });

  it('refuses what is not a worker count', () => {
    for (const bad of [
      ['--workers'],
      ['--workers', '0'],
      ['--workers', 'three'],
      ['--workers', '1.5'],
      ['--workers', '-1'],
      ['--workers', String(MAX_WORKERS + 1)],
    ]) {
      expect(() => parseArgs(bad), bad.join(' ')).toThrow(/--workers/);
    }
  });
});

const kills = (plan: PlannedFault[]) => plan.filter((f) => f.kind === 'worker_kill');
const outages = (plan: PlannedFault[]) => plan.filter((f) => f.kind !== 'worker_kill');

describe('the fault plan', () => {
  it('keeps the single-worker plan: four kills without a worker index, a kill inside the Temporal outage', () => {
    const plan = planFaults(createRng(11, 'faults'), SPAN_MS);
    expect(kills(plan)).toHaveLength(4);
    expect(kills(plan).every((f) => f.worker === undefined)).toBe(true);
    expect(plan.find((f) => f.kind === 'temporal_outage')?.workerKillAfterMs).toBeGreaterThan(0);
    // The default is one worker: the same seed, the same plan.
    expect(planFaults(createRng(11, 'faults'), SPAN_MS, 1)).toEqual(plan);
  });

  it('with three workers, kills one every interval across the traffic, round robin, and keeps both outages', () => {
    for (const seed of [1, 2, 3, 42, 999]) {
      const plan = planFaults(createRng(seed, 'faults'), SPAN_MS, 3);
      const scheduled = kills(plan);
      expect(scheduled.map((f) => f.offsetMs)).toEqual(
        Array.from(
          { length: Math.floor(SPAN_MS / WORKER_KILL_INTERVAL_MS) },
          (_, i) => (i + 1) * WORKER_KILL_INTERVAL_MS,
        ),
      );
      const order = scheduled.map((f) => f.worker as number);
      for (const [i, w] of order.entries()) expect(w).toBe((order[0]! + i) % 3);
      for (const f of scheduled) {
        expect(f.holdMs).toBeGreaterThanOrEqual(500);
        expect(f.holdMs).toBeLessThanOrEqual(3_000);
      }
      expect(outages(plan).map((f) => [f.kind, f.holdMs])).toEqual([
        ['postgres_outage', POSTGRES_OUTAGE_MS],
        ['temporal_outage', TEMPORAL_OUTAGE_MS],
      ]);
      // The schedule does the killing during the outage too: no kill of its own inside it.
      expect(plan.every((f) => f.workerKillAfterMs === undefined)).toBe(true);
      expect(plan.map((f) => f.offsetMs)).toEqual([...plan.map((f) => f.offsetMs)].sort((a, b) => a - b));
    }
  });

  it('is fixed by the seed, and the seed picks the first worker killed', () => {
    expect(planFaults(createRng(5, 'faults'), SPAN_MS, 3)).toEqual(planFaults(createRng(5, 'faults'), SPAN_MS, 3));
    const firsts = new Set(
      Array.from({ length: 30 }, (_, seed) => kills(planFaults(createRng(seed, 'faults'), SPAN_MS, 3))[0]?.worker),
    );
    expect([...firsts].sort()).toEqual([0, 1, 2]);
  });

  it('gives each of N workers N - 1 intervals to come back before it is killed again', () => {
    const order = kills(planFaults(createRng(8, 'faults'), SPAN_MS, 4)).map((f) => f.worker);
    for (let i = 0; i + 4 < order.length; i++) {
      expect(order.slice(i + 1, i + 4)).not.toContain(order[i]);
      expect(order[i + 4]).toBe(order[i]);
    }
  });
});

describe('whom a scheduled kill takes', () => {
  const workers = (...pids: Array<number | undefined>) => pids.map((pid, i) => ({ name: `worker-${i + 1}`, pid }));

  it('the planned worker while it is up', () => {
    expect(scheduledTarget(workers(10, 11, 12), 1)?.name).toBe('worker-2');
  });

  it('the next one up in round-robin order while the planned one is still coming back', () => {
    expect(scheduledTarget(workers(10, undefined, 12), 1)?.name).toBe('worker-3');
    expect(scheduledTarget(workers(10, 11, undefined), 2)?.name).toBe('worker-1');
  });

  it('nobody while fewer than two are up: the schedule never leaves the cluster without a worker', () => {
    expect(scheduledTarget(workers(undefined, 11, undefined), 1)).toBeUndefined();
    expect(scheduledTarget(workers(undefined, undefined, undefined), 0)).toBeUndefined();
  });
});

describe('traffic through several APIs', () => {
  it('sends event i to API i and each retry to the next one', () => {
    const apis = ['a', 'b'];
    expect([0, 1, 2, 3].map((i) => apiFor(apis, i, 1))).toEqual(['a', 'b', 'a', 'b']);
    expect([1, 2, 3].map((n) => apiFor(apis, 0, n))).toEqual(['a', 'b', 'a']);
    expect([1, 2, 3].map((n) => apiFor(['only'], 5, n))).toEqual(['only', 'only', 'only']);
    expect(() => apiFor([], 0, 1)).toThrow();
  });
});
