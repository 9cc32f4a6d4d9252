import { Runtime, type RuntimeOptions } from '@temporalio/worker';
import type { Config } from './config';

/**
 * The Temporal SDK's runtime for a process that runs a worker, with the SDK's own metrics (temporal_*: task
 * slots, poll and schedule-to-start latencies, sticky cache...) on a Prometheus exporter bound to loopback at
 * METRICS_PORT + 1. Our metrics page fetches it at scrape time (infra/metrics-server.ts), so operators scrape
 * one port per process; the exporter's own port is loopback-only and needs no firewall rule.
 * Installed once, before the first NativeConnection: the SDK reads these options only then.
 */

export function temporalMetricsAddress(metrics: Config['metrics']): string | undefined {
  return metrics.port === 0 ? undefined : `127.0.0.1:${metrics.port + 1}`;
}

/**
 * Returns the exporter's page URL, or undefined when metrics are off or the port is taken (warned). The SDK's
 * naming defaults are kept (durations in milliseconds, counters without _total), as Temporal's own SDK
 * dashboards read them.
 */
export function installTemporalRuntime(
  metrics: Config['metrics'],
  options: Pick<RuntimeOptions, 'logger' | 'shutdownSignals'>,
  warn: (message: string) => void,
): string | undefined {
  const bindAddress = temporalMetricsAddress(metrics);
  if (bindAddress) {
    try {
      Runtime.install({ ...options, telemetryOptions: { metrics: { prometheus: { bindAddress } } } });
      return `http://${bindAddress}/metrics`;
    } catch (err) {
      // The SDK fails to create its runtime when the port is taken; it can be created again without it.
      warn(`metrics: Temporal SDK metrics off (${(err as Error).message})`);
    }
  }
  Runtime.install(options);
  return undefined;
}
