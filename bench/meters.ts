import type { Pool } from '../db/pool';
import { cpuPerDelivery, startCpuMeter, type CpuMeter } from './proc-cpu';
import { persistencePerDelivery, readPersistenceRequests, type OperationCounts, type PersistencePerDelivery } from './temporal-metrics';
import { p50p99, type Window } from './stats';

export interface Costs {
  /** CPU ms per delivery of the bench process (worker + client + receiver), the Temporal server and Postgres. */
  cpuMsPerDelivery: ReturnType<typeof cpuPerDelivery>;
  persistencePerDelivery: PersistencePerDelivery;
  /**
   * How long the workflows that finished inside the window lived, from their start to their function's return
   * (bench/completions.ts); absent for a phase without workflows. Under load this is where deliveries queue
   * after their start, and a workflow that outlives the server's visibility poll costs a started record.
   */
  workflowLifeMs?: { p50Ms: number; p99Ms: number };
}

/**
 * Meters bracketing a measured window: CPU of each process and the server's persistence requests, read when
 * the window opens and when it closes, divided by what completed inside it.
 */
export function costMeters(server: { pid?: number; metricsUrl?: string }, pool: Pool): Window & { costs(): Costs; workflowLived(ms: number): void } {
  let cpu: CpuMeter | undefined;
  let before: OperationCounts = {};
  let costs: Costs | undefined;
  let open = false;
  const lives: number[] = [];
  return {
    async onStart() {
      [cpu, before] = await Promise.all([startCpuMeter(server.pid, pool), readPersistenceRequests(server.metricsUrl)]);
      open = true;
    },
    async onEnd(completed) {
      open = false;
      const [reading, after] = await Promise.all([(cpu as CpuMeter).stop(), readPersistenceRequests(server.metricsUrl)]);
      costs = { cpuMsPerDelivery: cpuPerDelivery(reading, completed), persistencePerDelivery: persistencePerDelivery(before, after, completed) };
      if (lives.length > 0) costs.workflowLifeMs = p50p99(lives);
    },
    /** A workflow's life, counted if it finished while the window was open. */
    workflowLived(ms: number) {
      if (open) lives.push(ms);
    },
    costs() {
      if (!costs) throw new Error('bench: the measured window never closed');
      return costs;
    },
  };
}
