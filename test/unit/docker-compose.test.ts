import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { SEARCH_ATTRIBUTE_CLI_TYPES } from '../../src/core/delivery-contract';
import {
  DEFAULT_DYNAMIC_CONFIG_FILE,
  DEFAULT_NUM_HISTORY_SHARDS,
  DEFAULT_RETENTION_HOURS,
  SCHEMA_DIRS,
  SQL_PLUGIN,
  TEMPORAL_SERVER_GOGC,
  TEMPORAL_SERVER_VERSION,
  schemaSteps,
  sqlToolArgs,
} from '../../temporal-tools/temporal-server-config';
import { devServerArgs } from '../../temporal-tools/dev-server';
import { dynamicConfigValues } from '../../temporal-tools/dynamic-config';
import { loadConfig, SECRET_SETTINGS } from '../../src/infra/config';

// No Docker engine runs here, so the compose file is checked by reading it.
const root = path.join(__dirname, '..', '..');
const compose = parse(readFileSync(path.join(root, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
  secrets: Record<string, { file: string }>;
  services: Record<
    string,
    {
      image?: string;
      build?: string;
      restart?: string;
      entrypoint?: string[];
      command?: string[];
      volumes?: string[];
      ports?: string[];
      expose?: string[];
      profiles?: string[];
      environment?: Record<string, string>;
      secrets?: string[];
      depends_on?: Record<string, { condition: string }> | string[];
    }
  >;
};
const services = compose.services;

describe('docker-compose.yml', () => {
  it('describes Postgres, Temporal on Postgres with its setup jobs, the Temporal UI, the api and the worker', () => {
    expect(Object.keys(services)).toEqual(
      expect.arrayContaining([
        'postgres',
        'temporal-schema',
        'temporal',
        'temporal-namespace',
        'temporal-ui',
        'api',
        'worker',
      ]),
    );
    expect(services.postgres?.image).toMatch(/^postgres:15/);
    expect(services.temporal?.image).toMatch(/^temporalio\/server:1\.29/);
    expect(services.temporal?.environment?.DB).toBe(SQL_PLUGIN);
    expect(services.temporal?.environment?.POSTGRES_SEEDS).toBe('postgres');
    expect(services['temporal-ui']?.environment?.TEMPORAL_ADDRESS).toBe('temporal:7233');
  });

  it('publishes the documented ports: the API on every interface, Postgres, Temporal and its UI on loopback only', () => {
    expect(services.postgres?.ports).toEqual(['127.0.0.1:5432:5432']);
    expect(services.temporal?.ports).toEqual(['127.0.0.1:7233:7233']);
    expect(services['temporal-ui']?.ports).toEqual(['127.0.0.1:8233:8080']);
    expect(services.prometheus?.ports).toEqual(['127.0.0.1:9090:9090']);
    expect(services.api?.ports).toEqual(['3000:3000']);
    // Workers scale out (`--scale worker=N`): a fixed host port would stop the second replica.
    expect(services.worker?.ports).toBeUndefined();
    // The one-shot jobs serve nothing.
    for (const job of ['temporal-schema', 'temporal-namespace', 'migrate'])
      expect(services[job]?.ports, job).toBeUndefined();
  });

  it('pins every image it pulls to a version, and none is one Temporal offers for development only', () => {
    const raw = readFileSync(path.join(root, 'docker-compose.yml'), 'utf8');
    expect(raw).not.toMatch(/auto-setup/);
    for (const [name, service] of Object.entries(services)) {
      if (service.build) continue; // ours, built from the Dockerfile
      expect(service.image, name).toMatch(/^[\w./-]+:v?\d+(\.\d+)*[\w.-]*$/);
      expect(service.image, name).not.toMatch(/:latest$/);
    }
    // A Prometheus of the 3.x line, which reads deploy/prometheus unchanged.
    expect(services.prometheus?.image).toMatch(/^prom\/prometheus:v3\.\d+\.\d+$/);
  });

  it('builds api and worker from the Dockerfile, with commands that exist after `npm run build`', () => {
    expect(existsSync(path.join(root, 'Dockerfile'))).toBe(true);
    // Both stages on Node 24 LTS, a line package.json's engines names (and `npm run test:node24` runs).
    const bases = [...readFileSync(path.join(root, 'Dockerfile'), 'utf8').matchAll(/^FROM (\S+)/gm)].map((m) => m[1]);
    expect(bases).toEqual(['node:24-bookworm-slim', 'node:24-bookworm-slim']);
    const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { engines: { node: string } };
    expect(pkg.engines.node).toContain('^24.0.0');
    const compiled: Record<string, string> = {
      'dist/api/server.js': 'src/api/server.ts',
      'dist/worker/main.js': 'src/worker/main.ts',
    };
    for (const name of ['api', 'worker'] as const) {
      const service = services[name];
      expect(service?.build).toBe('.');
      const entry = service?.command?.[1] as string;
      expect(compiled[entry], `${name} runs ${entry}`).toBeDefined();
      expect(existsSync(path.join(root, compiled[entry] as string))).toBe(true);
    }
  });

  it('runs every process of the image on jemalloc, installed and linked at the path LD_PRELOAD names', () => {
    const runtime =
      readFileSync(path.join(root, 'Dockerfile'), 'utf8')
        .split(/^FROM /m)
        .at(-1) ?? '';
    const preload = /^ENV LD_PRELOAD=(\S+)$/m.exec(runtime)?.[1];
    expect(preload).toBe('/usr/local/lib/libjemalloc.so.2');
    expect(runtime).toMatch(/apt-get install -y --no-install-recommends libjemalloc2/);
    expect(runtime).toContain(`ln -s "$(dpkg -L libjemalloc2 | grep '/libjemalloc\\.so\\.2$')" ${preload}`);
    // Before USER node: installing needs root.
    expect(runtime.indexOf('libjemalloc2')).toBeLessThan(runtime.indexOf('USER node'));
  });

  it('gives each service only the secrets it uses, as Docker secrets from files read through <NAME>_FILE', () => {
    for (const [name, secret] of Object.entries(compose.secrets)) {
      expect(secret.file, name).toBe(`./secrets/${name}`);
    }
    const used = (name: string) => [...(services[name]?.secrets ?? [])].sort();
    expect(used('api')).toEqual(['database_url', 'internal_api_token', 'webhook_secret_encryption_keys']);
    expect(used('worker')).toEqual(['database_url', 'smtp_url', 'webhook_secret_encryption_keys']);
    expect(used('migrate')).toEqual(['database_url']);
    for (const [name, service] of Object.entries(services)) {
      const env = service.environment ?? {};
      // No secret setting's value in the file or the shell: only <NAME>_FILE, naming a secret the service mounts.
      for (const setting of SECRET_SETTINGS) expect(env[setting], `${name} ${setting}`).toBeUndefined();
      for (const [key, value] of Object.entries(env).filter(([key]) => key.endsWith('_FILE'))) {
        const secret = /^\/run\/secrets\/(\w+)$/.exec(value)?.[1];
        expect(secret, `${name} ${key}`).toBe(key.slice(0, -'_FILE'.length).toLowerCase());
        expect(service.secrets, `${name} ${key}`).toContain(secret);
      }
      if (['api', 'worker', 'migrate'].includes(name)) continue;
      expect(service.secrets, name).toBeUndefined();
    }
  });

  it('starts api and worker under NODE_ENV=production from the secret files, and refuses a placeholder token', () => {
    for (const name of ['api', 'worker'] as const) {
      const config = loadConfig(productionEnv(name));
      expect(config.databaseUrl, name).toBe(SECRET_FILES.database_url);
      expect(config.webhook.secretEncryptionKeys, name).toHaveLength(1);
      expect(config.publicUrl, name).toBe(SHELL.PUBLIC_URL);
    }
    expect(loadConfig(productionEnv('api')).internalApiToken).toBe(SECRET_FILES.internal_api_token);
    expect(loadConfig(productionEnv('worker')).internalApiToken).toBeUndefined();
    expect(loadConfig(productionEnv('worker')).smtpUrl).toBeUndefined();
    for (const token of ['change-me-internal-token', 'change-me-internal-token-0123456789', 'a1b2c3d4'.repeat(4)]) {
      expect(() => loadConfig(productionEnv('api', { internal_api_token: token }))).toThrow(/INTERNAL_API_TOKEN/);
    }
  });

  it('requires PUBLIC_URL from the shell: the image (NODE_ENV=production) needs an https one to start', () => {
    const { PUBLIC_URL: _url, ...withoutUrl } = SHELL;
    expect(() => interpolated(services.api?.environment ?? {}, withoutUrl)).toThrow(/set PUBLIC_URL/);
    expect(() => loadConfig(productionEnv('api', {}, { PUBLIC_URL: 'http://hooks.example.com' }))).toThrow(
      /^config: PUBLIC_URL/,
    );
  });

  it('serves the internal routes on INTERNAL_PORT, to the compose network only', () => {
    const config = loadConfig(productionEnv('api'));
    expect(config.internalPort).toBeGreaterThan(0);
    expect(config.internalPort).not.toBe(config.port);
    expect(services.api?.expose).toContain(String(config.internalPort));
    expect((services.api?.ports ?? []).join(' ')).not.toContain(String(config.internalPort));
  });

  it('configures the app through the contract environment variables', () => {
    for (const name of ['api', 'worker'] as const) {
      const env = services[name]?.environment ?? {};
      expect(loadConfig(productionEnv(name)).databaseUrl).toMatch(/^postgres:\/\/.*@postgres:5432\//);
      expect(env.TEMPORAL_ADDRESS).toBe('temporal:7233');
      expect(env.TEMPORAL_NAMESPACE).toBe('default');
    }
    expect(services.api?.environment?.PORT).toBe('3000');
  });

  it("serves each process's Prometheus page to the compose network, as the app's own config reads it", () => {
    for (const name of ['api', 'worker'] as const) {
      const config = loadConfig(productionEnv(name));
      // 127.0.0.1, the default, would be unreachable from the scraper's container.
      expect(config.metrics.host, name).toBe('0.0.0.0');
      expect(config.metrics.port, name).toBeGreaterThan(0);
      expect(services[name]?.expose, name).toContain(String(config.metrics.port));
      if (name === 'api') expect(config.metrics.port, 'apart from the API port').not.toBe(config.port);
    }
  });

  it("the worker's Temporal SDK metrics are reached through its page, on no exposed port", () => {
    const config = loadConfig(productionEnv('worker'));
    const published = [...(services.worker?.expose ?? []), ...(services.worker?.ports ?? [])];
    expect(published).toEqual([String(config.metrics.port)]);
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
    expect(services.migrate?.command).toEqual(['node', 'src/cli/bin.js', 'migrate']);
  });
});

/** What an operator sets in the shell before `docker compose up`: the variables compose requires. */
const SHELL: Record<string, string> = { PUBLIC_URL: 'https://hooks.example.com' };

/** What an operator writes into ./secrets, as the comment atop docker-compose.yml says. */
const SECRET_FILES: Record<string, string> = {
  database_url: 'postgres://postgres:postgres@postgres:5432/parcel_webhooks',
  internal_api_token: 'f3c9a1d27be84e0c9d1a5b7e2c4f6a80',
  webhook_secret_encryption_keys: '6b1f0c2a9d4e8f7a3c5b1e0d9f8a7c6b5e4d3c2b1a0f9e8d7c6b5a4f3e2d1c0b',
  smtp_url: '',
};

/**
 * A service's environment as its container sees it under the image's NODE_ENV=production: compose's
 * interpolation, and each /run/secrets/<name> a file holding that secret (SECRET_FILES, overridden by `files`).
 */
function productionEnv(
  name: string,
  files: Record<string, string> = {},
  shell: Record<string, string> = {},
): Record<string, string> {
  const dir = mkdtempSync(path.join(tmpdir(), 'compose-secrets-'));
  const contents = { ...SECRET_FILES, ...files };
  for (const secret of services[name]?.secrets ?? []) writeFileSync(path.join(dir, secret), `${contents[secret]}\n`);
  const env = interpolated(services[name]?.environment ?? {}, { ...SHELL, ...shell });
  const mounted = Object.entries(env).map(([key, value]) => [key, value.replace(/^\/run\/secrets\//, `${dir}/`)]);
  return { ...Object.fromEntries(mounted), NODE_ENV: 'production' };
}

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

describe('docker-compose.yml and `parcel-webhooks temporal-server` run the same Temporal', () => {
  const temporal = services.temporal;

  it('same server version, and its own version of the admin tools for the setup jobs', () => {
    expect(temporal?.image).toBe(`temporalio/server:${TEMPORAL_SERVER_VERSION}`);
    for (const job of ['temporal-schema', 'temporal-namespace']) {
      expect(services[job]?.image, job).toMatch(
        new RegExp(`^temporalio/admin-tools:${TEMPORAL_SERVER_VERSION.replaceAll('.', '\\.')}-`),
      );
    }
  });

  it('sets up the schema before the server starts: both databases created, versioned and brought up to date', () => {
    const job = services['temporal-schema'];
    expect(job?.restart).toBe('no');
    expect((job?.depends_on as Record<string, { condition: string }>).postgres?.condition).toBe('service_healthy');
    expect((temporal?.depends_on as Record<string, { condition: string }>)['temporal-schema']?.condition).toBe(
      'service_completed_successfully',
    );
    expect(job?.entrypoint).toEqual(['/bin/sh', '-c']);
    // The server's own connection settings, so the job prepares exactly the databases the server opens.
    const env = temporal?.environment ?? {};
    expect(env.DB).toBe(SQL_PLUGIN);
    const target = {
      host: env.POSTGRES_SEEDS as string,
      port: Number(env.DB_PORT),
      user: env.POSTGRES_USER as string,
      password: env.POSTGRES_PWD as string,
    };
    expect(target).toEqual({
      host: 'postgres',
      port: 5432,
      user: services.postgres?.environment?.POSTGRES_USER,
      password: services.postgres?.environment?.POSTGRES_PASSWORD,
    });
    const databases = { temporal: env.DBNAME as string, visibility: env.VISIBILITY_DBNAME as string };
    expect(databases).toEqual({ temporal: 'temporal', visibility: 'temporal_visibility' });
    // The same steps and arguments as temporal-tools/temporal-server-databases.ts, on the schema files the image
    // ships in /etc/temporal/schema (the server module's schema/ directory).
    const expected = (['temporal', 'visibility'] as const).flatMap((kind) => {
      const steps = schemaSteps(`/etc/temporal/${SCHEMA_DIRS[kind]}`);
      return [steps.create, steps.setup, steps.update].map((step) =>
        sqlToolArgs(target, databases[kind], step).join(' '),
      );
    });
    const script = (job?.command?.[0] ?? '').replaceAll('$$', '$');
    const run = [...script.matchAll(/^(?:created )?temporal-sql-tool (.+)$/gm)].map((m) => m[1]);
    expect(run).toEqual(expected);
    // Only create-database may meet an existing database; any other failure fails the job and holds the server.
    expect(script).toMatch(/^set -eu$/m);
    expect(script.match(/^created /gm)).toHaveLength(2);
    expect(run.filter((args) => args?.includes('create-database'))).toHaveLength(2);
  });

  it('same dynamic config: the committed file, mounted where DYNAMIC_CONFIG_FILE_PATH points', () => {
    const mountPath = temporal?.environment?.DYNAMIC_CONFIG_FILE_PATH;
    const source = path.relative(root, DEFAULT_DYNAMIC_CONFIG_FILE);
    expect(temporal?.volumes).toContain(`./${source}:${mountPath}:ro`);
    expect(dynamicConfigValues(DEFAULT_DYNAMIC_CONFIG_FILE)).toMatchObject({
      'system.enableActivityEagerExecution': true,
    });
  });

  it('the dev server gets the same dynamic config values as flags', () => {
    const args = devServerArgs({ cliPath: 'temporal', port: 7233 });
    const flags = Object.fromEntries(
      args.flatMap((arg, i) => (arg === '--dynamic-config-value' ? [args[i + 1]?.split('=') as [string, string]] : [])),
    );
    const values = dynamicConfigValues(DEFAULT_DYNAMIC_CONFIG_FILE);
    expect(Object.keys(flags).sort()).toEqual(Object.keys(values).sort());
    for (const [key, value] of Object.entries(values)) expect(JSON.parse(flags[key] as string), key).toEqual(value);
    // The dev server's own default rereads search attributes from its store on every read; ours keeps the cache.
    expect(flags['system.forceSearchAttributesCacheRefreshOnRead']).toBe('false');
  });

  it('same search attributes, registered once the server is healthy and before the app starts, and no others', () => {
    const setup = services['temporal-namespace'];
    expect(setup?.entrypoint).toEqual(['/bin/sh', '-c']);
    expect(setup?.restart).toBe('no');
    expect((setup?.depends_on as Record<string, { condition: string }>).temporal?.condition).toBe('service_healthy');
    expect(setup?.environment?.TEMPORAL_ADDRESS).toBe('temporal:7233');
    expect(createdSearchAttributes(setup?.command?.[0] ?? '')).toEqual(SEARCH_ATTRIBUTE_CLI_TYPES);
    for (const name of ['api', 'worker'] as const) {
      const deps = services[name]?.depends_on as Record<string, { condition: string }>;
      expect(deps['temporal-namespace']?.condition).toBe('service_completed_successfully');
    }
  });

  it('same shards, Go collector target, namespace and retention', () => {
    expect(temporal?.environment?.NUM_HISTORY_SHARDS).toBe(String(DEFAULT_NUM_HISTORY_SHARDS));
    expect(temporal?.environment?.GOGC).toBe(TEMPORAL_SERVER_GOGC);
    const script = services['temporal-namespace']?.command?.[0] ?? '';
    const create = script.match(/temporal operator namespace create (.*)$/m)?.[1] ?? '';
    const namespace = services.api?.environment?.TEMPORAL_NAMESPACE;
    expect(create).toContain(`--namespace ${namespace} --retention ${DEFAULT_RETENTION_HOURS}h`);
    // Created only when describe finds none: a rerun leaves the namespace as it is.
    expect(script).toContain(`temporal operator namespace describe --namespace ${namespace} >/dev/null 2>&1 ||`);
    expect(script).toContain(`search-attribute list --namespace ${namespace}`);
  });
});
