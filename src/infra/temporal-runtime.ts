import { Runtime, type RuntimeOptions } from '@temporalio/worker';
import type { Config } from './config';
import { freeLoopbackPort } from './ports';

/**
 * The Temporal SDK's runtime for a process that runs a worker, with the SDK's own metrics (temporal_*: task
 * slots, poll and schedule-to-start latencies, sticky cache...) on a Prometheus exporter bound to a free loopback
 * port. Our metrics page fetches it at scrape time (infra/metrics-server.ts), so operators scrape one port per
 * process and never this one: it can be any port, and several workers on one host never contend for it.
 * Installed once, before the first NativeConnection: the SDK reads these options only then.
 */

/** Tries before the SDK's metrics are given up: another process may take a port between our probe and the SDK's bind. */
const EXPORTER_BIND_TRIES = 3;

/**
 * Returns the exporter's page URL, or undefined when metrics are off or no port could be bound (warned: the
 * worker runs on without the SDK's metrics). The SDK's naming defaults are kept (durations in milliseconds,
 * counters without _total), as Temporal's own SDK dashboards read them.
 */
export async function installTemporalRuntime(
  metrics: Config['metrics'],
  options: Pick<RuntimeOptions, 'logger' | 'shutdownSignals'>,
  warn: (message: string) => void,
): Promise<string | undefined> {
  if (metrics.port !== 0) {
    let failure = '';
    for (let attempt = 1; attempt <= EXPORTER_BIND_TRIES; attempt += 1) {
      // The SDK binds the address it is given and cannot report a port of its choosing: one free now is named.
      const bindAddress = `127.0.0.1:${await freeLoopbackPort()}`;
      try {
        Runtime.install({ ...options, telemetryOptions: { metrics: { prometheus: { bindAddress } } } });
        return `http://${bindAddress}/metrics`;
      } catch (err) {
        // The SDK fails to create its runtime when the port is taken; it can be created again.
        failure = (err as Error).message;
      }
    }
    warn(`metrics: Temporal SDK metrics off (${failure})`);
  }
  Runtime.install(options);
  return undefined;
}
