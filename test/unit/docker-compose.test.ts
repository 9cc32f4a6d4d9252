import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { SEARCH_ATTRIBUTE_CLI_TYPES } from '../../core/delivery-contract';
import {
  DEFAULT_DYNAMIC_CONFIG_FILE,
  DEFAULT_NUM_HISTORY_SHARDS,
  DEFAULT_RETENTION_HOURS,
  TEMPORAL_SERVER_VERSION,
} from '../../temporal-tools/temporal-server-config';
import { devServerArgs } from '../../temporal-tools/dev-server';
import { loadConfig } from '../../infra/config';
import { temporalMetricsAddress } from '../../infra/temporal-runtime';

// No Docker engine runs here, so the compose file is checked by reading it.
const root = path.join(__dirname, '..', '..');
const compose = parse(readFileSync(path.join(root, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
  services: Record<string, {
    image?: string;
    build?: string;
    entrypoint?: string[];
    command?: string[];
    volumes?: string[];
    ports?: string[];
    expose?: string[];
    profiles?: string[];
    environment?: Record<string, string>;
    depends_on?: Record<string, { condition: string }> | string[];
  }>;
};
const services = compose.services;

describe('docker-compose.yml', () => {
  it('describes Postgres, Temporal on Postgres, the Temporal UI, the api and the worker', () => {
    expect(Object.keys(services)).toEqual(expect.arrayContaining(['postgres', 'temporal', 'temporal-ui', 'api', 'worker']));
    expect(services.postgres?.image).toMatch(/^postgres:15/);
    expect(services.temporal?.image).toMatch(/^temporalio\/auto-setup:1\.29/);
    expect(services.temporal?.environment?.DB).toBe('postgres12');
    expect(services.temporal?.environment?.POSTGRES_SEEDS).toBe('postgres');
    expect(services['temporal-ui']?.environment?.TEMPORAL_ADDRESS).toBe('temporal:7233');
  });

  it('publishes the documented ports: the API on every interface, Postgres, Temporal and its UI on loopback only', () => {
    expect(services.postgres?.ports).toEqual(['127.0.0.1:5432:5432']);
    expect(services.temporal?.ports).toEqual(['127.0.0.1:7233:7233']);
    expect(services['temporal-ui']?.ports).toEqual(['127.0.0.1:8233:8080']);
    expect(services.api?.ports).toEqual(['3000:3000']);
    // Workers scale out (`--scale worker=N`): a fixed host port would stop the second replica.
    expect(services.worker?.ports).toBeUndefined();
  });

  it('builds api and worker from the Dockerfile, with commands that exist after `npm run build`', () => {
    expect(existsSync(path.join(root, 'Dockerfile'))).toBe(true);
    const compiled: Record<string, string> = { 'dist/api/server.js': 'api/server.ts', 'dist/worker/main.js': 'worker/main.ts' };
    for (const name of ['api', 'worker'] as const) {
      const service = services[name];
      expect(service?.build).toBe('.');
      const entry = service?.command?.[1] as string;
      expect(compiled[entry], `${name} runs ${entry}`).toBeDefined();
      expect(existsSync(path.join(root, compiled[entry] as string))).toBe(true);
    }
  });

  it('copies into the image every source folder the copied sources import at run time (the CLI runs from source)', () => {
    const runtime = readFileSync(path.join(root, 'Dockerfile'), 'utf8').split(/^FROM /m).at(-1) ?? '';
    const copied = new Set([...runtime.matchAll(/^COPY --from=build \/app\/(\w+) /gm)].map((m) => m[1]));
    const missing = new Set<string>();
    for (const dir of copied) {
      if (dir === 'dist') continue; // compiled by the build stage, not in a checkout
      for (const file of readdirSync(path.join(root, dir as string), { recursive: true, encoding: 'utf8' })) {
        if (!file.endsWith('.ts') || file.endsWith('.test.ts')) continue;
        const source = readFileSync(path.join(root, dir as string, file), 'utf8');
        for (const m of source.matchAll(/^import (?!type )[^;]*? from '(\.[^']+)'|require\('(\.[^']+)'\)/gm)) {
          const target = path.relative(root, path.resolve(path.dirname(path.join(root, dir as string, file)), (m[1] ?? m[2]) as string));
          const top = target.split(path.sep)[0] as string;
          if (!target.startsWith('..') && target.includes(path.sep) && !copied.has(top)) missing.add(`${top} (from ${dir}/${file})`);
        }
      }
    }
    expect([...missing]).toEqual([]);
  });

  it('requires INTERNAL_API_TOKEN from the shell, with no default, and the app refuses a short or placeholder one', () => {
    const raw = readFileSync(path.join(root, 'docker-compose.yml'), 'utf8');
    expect(raw).toContain('INTERNAL_API_TOKEN: ${INTERNAL_API_TOKEN:?set INTERNAL_API_TOKEN to a random string of 32+ characters}');
    expect(() => interpolated(services.api?.environment ?? {})).toThrow(/set INTERNAL_API_TOKEN/);
    for (const token of ['change-me-internal-token', 'change-me-internal-token-0123456789']) {
      expect(() => loadConfig(interpolated(services.api?.environment ?? {}, { INTERNAL_API_TOKEN: token }))).toThrow(/INTERNAL_API_TOKEN/);
    }
  });

  it('serves the internal routes on INTERNAL_PORT, to the compose network only', () => {
    const config = loadConfig(interpolated(services.api?.environment ?? {}, SHELL));
    expect(config.internalPort).toBeGreaterThan(0);
    expect(config.internalPort).not.toBe(config.port);
    expect(services.api?.expose).toContain(String(config.internalPort));
    expect((services.api?.ports ?? []).join(' ')).not.toContain(String(config.internalPort));
  });

  it('configures the app through the contract environment variables', () => {
    for (const name of ['api', 'worker'] as const) {
      const env = services[name]?.environment ?? {};
      expect(env.DATABASE_URL).toMatch(/^postgres:\/\/.*@postgres:5432\//);
      expect(env.TEMPORAL_ADDRESS).toBe('temporal:7233');
      expect(env.TEMPORAL_NAMESPACE).toBe('default');
    }
    expect(services.api?.environment?.PORT).toBe('3000');
  });

  it('serves each process\'s Prometheus page to the compose network, as the app\'s own config reads it', () => {
    for (const name of ['api', 'worker'] as const) {
      const config = loadConfig(interpolated(services[name]?.environment ?? {}, SHELL));
      // 127.0.0.1, the default, would be unreachable from the scraper's container.
      expect(config.metrics.host, name).toBe('0.0.0.0');
      expect(config.metrics.port, name).toBeGreaterThan(0);
      expect(services[name]?.expose, name).toContain(String(config.metrics.port));
      if (name === 'api') expect(config.metrics.port, 'apart from the API port').not.toBe(config.port);
    }
  });

  it('the worker\'s Temporal SDK metrics are on its loopback at METRICS_PORT+1, reached through its page, not exposed', () => {
    const config = loadConfig(interpolated(services.worker?.environment ?? {}, SHELL));
    expect(temporalMetricsAddress(config.metrics)).toBe(`127.0.0.1:${config.metrics.port + 1}`);
    const published = [...(services.worker?.expose ?? []), ...(services.worker?.ports ?? [])];
    expect(published).not.toContain(String(config.metrics.port + 1));
  });

  it('has an optional Prometheus that scrapes the api and every worker replica on their metrics port', () => {
    const prometheus = services.prometheus;
    expect(prometheus?.profiles).toEqual(['monitoring']);
    expect(prometheus?.volumes).toContain('./deploy/prometheus:/etc/prometheus:ro');
    expect(prometheus?.command).toEqual(['--config.file=/etc/prometheus/prometheus.yml']);
    const scrape = parse(readFileSync(path.join(root, 'deploy', 'prometheus', 'prometheus.yml'), 'utf8')) as {
      scrape_configs: { dns_sd_configs?: { names: string[]; type: string; port: number }[] }[];
    };
    const discovered = scrape.scrape_configs.flatMap((c) => c.dns_sd_configs ?? []);
    expect(discovered.flatMap((d) => d.names).sort()).toEqual(['api', 'worker']);
    for (const d of discovered) {
      for (const name of d.names) expect(services[name]?.expose, name).toContain(String(d.port));
    }
  });

  it('starts the app only after migrations ran and Temporal is healthy', () => {
    for (const name of ['api', 'worker'] as const) {
      const deps = services[name]?.depends_on as Record<string, { condition: string }>;
      expect(deps.migrate?.condition).toBe('service_completed_successfully');
      expect(deps.temporal?.condition).toBe('service_healthy');
    }
    expect(services.migrate?.command).toEqual(['node', 'cli/bin.js', 'migrate']);
  });
});

/** What an operator sets in the shell before `docker compose up`: the variables compose requires. */
const SHELL = { INTERNAL_API_TOKEN: 'f3c9a1d27be84e0c9d1a5b7e2c4f6a80' };

/**
 * Compose's interpolation with `shell` as the shell's variables: `${NAME:-default}` is the variable or its
 * default, `${NAME:?message}` the variable, or compose stops with the message.
 */
function interpolated(env: Record<string, string>, shell: Record<string, string> = {}): Record<string, string> {
  const value = (raw: string) =>
    raw
      .replace(/\$\{(\w+):-([^}]*)\}/g, (_m, name: string, fallback: string) => shell[name] || fallback)
      .replace(/\$\{(\w+):\?([^}]*)\}/g, (_m, name: string, message: string) => {
        if (!shell[name]) throw new Error(`required variable ${name} is missing a value: ${message}`);
        return shell[name];
      });
  return Object.fromEntries(Object.entries(env).map(([key, raw]) => [key, value(raw)]));
}

/** `--name X --type Y` pairs of a `temporal operator search-attribute create` command line. */
function createdSearchAttributes(script: string): Record<string, string> {
  const created = script.slice(script.indexOf('search-attribute create'));
  return Object.fromEntries([...created.matchAll(/--name (\w+) --type (\w+)/g)].map((m) => [m[1], m[2]]));
}

/** The values of a dynamic config file: key -> its unconstrained value. */
function dynamicConfigValues(file: string): Record<string, unknown> {
  const doc = parse(readFileSync(file, 'utf8')) as Record<string, { value: unknown; constraints?: object }[]>;
  return Object.fromEntries(Object.entries(doc).map(([key, entries]) => [key, entries[0]?.value]));
}

describe('docker-compose.yml and `parcel-webhooks temporal-server` run the same Temporal', () => {
  const temporal = services.temporal;

  it('same server version', () => {
    expect(temporal?.image).toBe(`temporalio/auto-setup:${TEMPORAL_SERVER_VERSION}`);
    expect(services['temporal-search-attributes']?.image).toBe(temporal?.image);
  });

  it('same dynamic config: the committed file, mounted where DYNAMIC_CONFIG_FILE_PATH points', () => {
    const mountPath = temporal?.environment?.DYNAMIC_CONFIG_FILE_PATH;
    const source = path.relative(root, DEFAULT_DYNAMIC_CONFIG_FILE);
    expect(temporal?.volumes).toContain(`./${source}:${mountPath}:ro`);
    expect(dynamicConfigValues(DEFAULT_DYNAMIC_CONFIG_FILE)).toMatchObject({ 'system.enableActivityEagerExecution': true });
  });

  it('the dev server gets the same dynamic config values as flags', () => {
    const args = devServerArgs({ cliPath: 'temporal', port: 7233 });
    const flags = Object.fromEntries(
      args.flatMap((arg, i) => (arg === '--dynamic-config-value' ? [args[i + 1]?.split('=') as [string, string]] : [])),
    );
    const values = dynamicConfigValues(DEFAULT_DYNAMIC_CONFIG_FILE);
    expect(Object.keys(flags).sort()).toEqual(Object.keys(values).sort());
    for (const [key, value] of Object.entries(values)) expect(JSON.parse(flags[key] as string), key).toEqual(value);
  });

  it('same search attributes, registered before the app starts, and none of auto-setup\'s test ones', () => {
    const setup = services['temporal-search-attributes'];
    expect(setup?.entrypoint).toEqual(['/bin/sh', '-c']);
    expect(createdSearchAttributes(setup?.command?.[0] ?? '')).toEqual(SEARCH_ATTRIBUTE_CLI_TYPES);
    expect(temporal?.environment?.SKIP_ADD_CUSTOM_SEARCH_ATTRIBUTES).toBe('true');
    for (const name of ['api', 'worker'] as const) {
      const deps = services[name]?.depends_on as Record<string, { condition: string }>;
      expect(deps['temporal-search-attributes']?.condition).toBe('service_completed_successfully');
    }
  });

  it('same shards, namespace and retention', () => {
    expect(temporal?.environment?.NUM_HISTORY_SHARDS).toBe(String(DEFAULT_NUM_HISTORY_SHARDS));
    expect(temporal?.environment?.DEFAULT_NAMESPACE).toBe('default');
    expect(temporal?.environment?.DEFAULT_NAMESPACE_RETENTION).toBe(`${DEFAULT_RETENTION_HOURS}h`);
  });
});
