import type { Pool } from '../db/pool';
import { cpuPerDelivery, startCpuMeter, type CpuMeter } from './proc-cpu';
import { persistencePerDelivery, readPersistenceRequests, type OperationCounts, type PersistencePerDelivery } from './temporal-metrics';
import type { Window } from './stats';

export interface Costs {
  /** CPU ms per delivery of the bench process (worker + client + receiver), the Temporal server and Postgres. */
  cpuMsPerDelivery: ReturnType<typeof cpuPerDelivery>;
  persistencePerDelivery: PersistencePerDelivery;
}

/**
 * Meters bracketing a measured window: CPU of each process and the server's persistence requests, read when
 * the window opens and when it closes, divided by what completed inside it.
 */
export function costMeters(server: { pid?: number; metricsUrl?: string }, pool: Pool): Window & { costs(): Costs } {
  let cpu: CpuMeter | undefined;
  let before: OperationCounts = {};
  let costs: Costs | undefined;
  return {
    async onStart() {
      [cpu, before] = await Promise.all([startCpuMeter(server.pid, pool), readPersistenceRequests(server.metricsUrl)]);
    },
    async onEnd(completed) {
      const [reading, after] = await Promise.all([(cpu as CpuMeter).stop(), readPersistenceRequests(server.metricsUrl)]);
      costs = { cpuMsPerDelivery: cpuPerDelivery(reading, completed), persistencePerDelivery: persistencePerDelivery(before, after, completed) };
    },
    costs() {
      if (!costs) throw new Error('bench: the measured window never closed');
      return costs;
    },
  };
}
