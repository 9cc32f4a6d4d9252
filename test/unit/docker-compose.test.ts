import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

// No Docker engine runs here, so the compose file is checked by reading it.
const root = path.join(__dirname, '..', '..');
const compose = parse(readFileSync(path.join(root, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
  services: Record<string, {
    image?: string;
    build?: string;
    command?: string[];
    ports?: string[];
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

  it('publishes the documented ports', () => {
    expect(services.postgres?.ports).toContain('5432:5432');
    expect(services.temporal?.ports).toContain('7233:7233');
    expect(services['temporal-ui']?.ports).toContain('8233:8080');
    expect(services.api?.ports).toContain('3000:3000');
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

  it('configures the app through the contract environment variables', () => {
    for (const name of ['api', 'worker'] as const) {
      const env = services[name]?.environment ?? {};
      expect(env.DATABASE_URL).toMatch(/^postgres:\/\/.*@postgres:5432\//);
      expect(env.TEMPORAL_ADDRESS).toBe('temporal:7233');
      expect(env.TEMPORAL_NAMESPACE).toBe('default');
    }
    expect(services.api?.environment?.PORT).toBe('3000');
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
