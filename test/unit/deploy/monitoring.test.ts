import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { collectProcessMetrics, registry } from '../../../src/infra/metrics';
import { baseName, metricNames } from '../../helpers/promql';
import { ensurePromtool } from '../../helpers/promtool';

/**
 * deploy/: the example alert rules and Grafana dashboard read only metrics the code registers (or the Temporal
 * SDK's temporal_*, or Prometheus' own `up`), so a renamed metric cannot leave an alert that never fires.
 */
const DEPLOY = path.join(__dirname, '..', '..', '..', 'deploy');
const ALERTS = path.join(DEPLOY, 'prometheus', 'alerts.yml');

interface Rule {
  alert?: string;
  record?: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
interface Panel {
  id: number;
  type: string;
  title: string;
  datasource?: { uid: string };
  gridPos: { x: number; y: number; w: number; h: number };
  targets?: { expr: string }[];
  panels?: Panel[];
}

const rules = (parse(readFileSync(ALERTS, 'utf8')) as { groups: { name: string; rules: Rule[] }[] }).groups.flatMap(
  (g) => g.rules,
);
const dashboard = JSON.parse(readFileSync(path.join(DEPLOY, 'grafana', 'parcel-webhooks.json'), 'utf8')) as {
  uid: string;
  panels: Panel[];
};
const panels = dashboard.panels.flatMap((p) => [p, ...(p.panels ?? [])]);
const dashboardExprs = panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr));
/** Expressions in annotations' templates (`query "..."`) are read by Prometheus too. */
const annotationExprs = rules.flatMap((r) =>
  Object.values(r.annotations ?? {}).flatMap((text) =>
    [...text.matchAll(/query "([^"]+)"/g)].map((m) => m[1] as string),
  ),
);

let registered: Map<string, string>;
beforeAll(async () => {
  collectProcessMetrics();
  registered = new Map((await registry.getMetricsAsJSON()).map((m) => [m.name, String(m.type)]));
});

function unknownMetrics(exprs: string[]): string[] {
  return exprs.flatMap(metricNames).filter((name) => {
    if (name.startsWith('temporal_') || name === 'up') return false;
    if (registered.has(name)) return false;
    return !(registered.get(baseName(name)) === 'histogram');
  });
}

describe('alert rules (deploy/prometheus/alerts.yml)', () => {
  it('are named, unique, with a severity and a summary', () => {
    const names = rules.map((r) => r.alert);
    expect(names.length).toBeGreaterThanOrEqual(10);
    expect(new Set(names).size).toBe(names.length);
    for (const rule of rules) {
      expect(rule.alert, JSON.stringify(rule)).toMatch(/^ParcelWebhooks[A-Z][A-Za-z0-9]+$/);
      expect(['info', 'warning', 'critical']).toContain(rule.labels?.severity);
      expect(rule.annotations?.summary, rule.alert).toBeTruthy();
      if (rule.for !== undefined) expect(rule.for).toMatch(/^\d+[smh]$/);
    }
  });

  it('read only metrics the code registers, the Temporal SDK exports, or up', () => {
    expect(unknownMetrics([...rules.map((r) => r.expr), ...annotationExprs])).toEqual([]);
  });

  it('cover what the issue asks an operator to be told of', () => {
    const read = new Set(rules.flatMap((r) => metricNames(r.expr)).map(baseName));
    for (const name of [
      'parcel_webhooks_delivery_attempts_total',
      'parcel_webhooks_deliveries_abandoned_total',
      'parcel_webhooks_endpoints_failing',
      'parcel_webhooks_outbox_oldest_pending_age_seconds',
      'parcel_webhooks_http_requests_total',
      'parcel_webhooks_http_request_duration_seconds',
      'parcel_webhooks_db_pool_waiting_requests',
      'temporal_worker_task_slots_available',
      'temporal_activity_schedule_to_start_latency',
    ]) {
      expect(read, name).toContain(name);
    }
  });

  it('pass `promtool check rules` and their own `promtool test rules`', (context) => {
    const promtool = ensurePromtool((msg) => process.stderr.write(`[promtool] ${msg}\n`));
    if (typeof promtool !== 'string') {
      process.stderr.write(`[promtool] skipped: ${promtool.reason}\n`);
      context.skip(promtool.reason);
      return;
    }
    const dir = path.dirname(ALERTS);
    const check = execFileSync(promtool, ['check', 'rules', 'alerts.yml'], { cwd: dir, encoding: 'utf8' });
    expect(check).toMatch(/SUCCESS: \d+ rules found/);
    const test = execFileSync(promtool, ['test', 'rules', 'alerts.test.yml'], { cwd: dir, encoding: 'utf8' });
    expect(test).toContain('SUCCESS');
    // The compose file's Prometheus config, with the rule files it loads (paths relative to it).
    const config = execFileSync(promtool, ['check', 'config', 'prometheus.yml'], { cwd: dir, encoding: 'utf8' });
    expect(config).toContain('SUCCESS: prometheus.yml is valid prometheus config file syntax');
  }, 300_000);
});

describe('Prometheus config (deploy/prometheus/prometheus.yml)', () => {
  const config = parse(readFileSync(path.join(DEPLOY, 'prometheus', 'prometheus.yml'), 'utf8')) as {
    rule_files: string[];
    scrape_configs: { job_name: string }[];
  };

  it('loads the alert rules and scrapes under the job the rules name', () => {
    expect(config.rule_files).toEqual(['alerts.yml']);
    const jobs = new Set(rules.flatMap((r) => [...r.expr.matchAll(/job="([^"]+)"/g)].map((m) => m[1])));
    expect(jobs.size).toBeGreaterThan(0);
    expect(config.scrape_configs.map((c) => c.job_name)).toEqual([...jobs]);
  });
});

describe('Grafana dashboard (deploy/grafana/parcel-webhooks.json)', () => {
  it('is a dashboard of panels on a chosen Prometheus data source, ids unique, inside the 24-column grid', () => {
    expect(dashboard.uid).toBe('parcel-webhooks');
    expect(new Set(panels.map((p) => p.id)).size).toBe(panels.length);
    for (const panel of panels.filter((p) => p.type !== 'row')) {
      expect(panel.datasource?.uid, panel.title).toBe('${datasource}');
      expect(panel.targets?.length, panel.title).toBeGreaterThan(0);
      expect(panel.gridPos.x + panel.gridPos.w, panel.title).toBeLessThanOrEqual(24);
    }
  });

  it('reads only metrics the code registers or the Temporal SDK exports', () => {
    expect(unknownMetrics(dashboardExprs)).toEqual([]);
  });

  it('shows every parcel_webhooks_ metric the code registers', () => {
    const shown = new Set(dashboardExprs.flatMap(metricNames).map(baseName));
    const ours = [...registered.keys()].filter((name) => name.startsWith('parcel_webhooks_'));
    expect(ours.filter((name) => !shown.has(name))).toEqual([]);
  });
});

describe('metricNames', () => {
  it('keeps metrics, drops functions, keywords, labels, ranges and groupings', () => {
    expect(
      metricNames(
        'histogram_quantile(0.99, sum by (le, route) (rate(a_bucket{route!="x"}[5m]))) > 1 and on(job) up == 0',
      ),
    ).toEqual(['a_bucket', 'up']);
    expect(metricNames('max(a) / ignoring(pool) b offset 5m > 1e3')).toEqual(['a', 'b']);
  });
});
