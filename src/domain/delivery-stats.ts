import {
  fillHours,
  HOUR_MS,
  hourWindow,
  percentile,
  totalsOf,
  type HourCounts,
  type OutcomeTotals,
} from '../core/delivery-stats';
import {
  deleteHoursBefore,
  endpointLatencyHistogram,
  listEndpointHours,
  listEndpointsHours,
} from '../db/delivery-stats';
import type { Pool } from '../db/pool';

/**
 * How an endpoint's deliveries are going, for the developers page's charts: attempts per UTC hour by outcome,
 * the success rate and response-time percentiles over a window, and the same in short for every endpoint of an
 * account. Read from the hourly counts kept as attempts are recorded (db/delivery-stats.ts). The caller has
 * checked that the endpoints belong to the merchant.
 */

export const CHART_WINDOWS = { '24h': 24, '7d': 168 } as const;
export type ChartWindow = keyof typeof CHART_WINDOWS;

export function isChartWindow(value: unknown): value is ChartWindow {
  return typeof value === 'string' && Object.prototype.hasOwnProperty.call(CHART_WINDOWS, value);
}

export interface EndpointHealth {
  window: ChartWindow;
  /** Every hour of the window, oldest first; an hour without attempts is zeros. */
  hours: HourCounts[];
  totals: OutcomeTotals;
  /** Response times of the window's answers (ms), estimated from the histogram; null without answers. */
  p50Ms: number | null;
  p95Ms: number | null;
}

function bounds(now: Date, hours: number): { window: Date[]; from: Date; until: Date } {
  const window = hourWindow(now, hours);
  const from = window[0] as Date;
  return { window, from, until: new Date((window[window.length - 1] as Date).getTime() + HOUR_MS) };
}

/** The response-time percentiles of an endpoint over a window (the chart's summary line). */
export async function endpointLatency(
  pool: Pool,
  endpointId: string,
  window: ChartWindow,
  now = new Date(),
): Promise<Pick<EndpointHealth, 'p50Ms' | 'p95Ms'>> {
  const { from, until } = bounds(now, CHART_WINDOWS[window]);
  const histogram = await endpointLatencyHistogram(pool, endpointId, from, until);
  return { p50Ms: percentile(histogram, 0.5), p95Ms: percentile(histogram, 0.95) };
}

export async function endpointHealth(
  pool: Pool,
  endpointId: string,
  window: ChartWindow,
  now = new Date(),
): Promise<EndpointHealth> {
  const { window: hourStarts, from, until } = bounds(now, CHART_WINDOWS[window]);
  const [found, latency] = await Promise.all([
    listEndpointHours(pool, endpointId, from, until),
    endpointLatency(pool, endpointId, window, now),
  ]);
  const hours = fillHours(hourStarts, found);
  return { window, hours, totals: totalsOf(hours), ...latency };
}

export interface EndpointSummary {
  endpointId: string;
  /** The last 24 hours, oldest first. */
  hours: HourCounts[];
  totals: OutcomeTotals;
}

/** The last 24 hours of each endpoint, in the order given. */
export async function endpointsLastDay(
  pool: Pool,
  endpointIds: readonly string[],
  now = new Date(),
): Promise<EndpointSummary[]> {
  const { window, from, until } = bounds(now, CHART_WINDOWS['24h']);
  const rows = await listEndpointsHours(pool, endpointIds, from, until);
  const byEndpoint = new Map<string, HourCounts[]>();
  for (const row of rows) byEndpoint.set(row.endpoint_id, [...(byEndpoint.get(row.endpoint_id) ?? []), row]);
  return endpointIds.map((endpointId) => {
    const hours = fillHours(window, byEndpoint.get(endpointId) ?? []);
    return { endpointId, hours, totals: totalsOf(hours) };
  });
}

/** Hourly counts are kept this long: the longest chart (7 days) and the hour in progress, with a day to spare. */
export const HOURLY_STATS_RETENTION_MS = 8 * 86_400_000;

/** Retention: one batch of hourly counts older than any chart reads. */
export async function deleteOldHours(pool: Pool, limit: number, now = new Date()): Promise<number> {
  return deleteHoursBefore(pool, new Date(now.getTime() - HOURLY_STATS_RETENTION_MS), limit);
}
