import { Client, Connection } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildServer } from '../../../src/api/server';
import { createPool, type Pool } from '../../../src/db/pool';
import { testConfig } from '../../helpers/env';

describe('health endpoints', () => {
  const config = testConfig();
  let pool: Pool;
  let connection: Connection;
  let app: FastifyInstance;

  beforeAll(async () => {
    pool = createPool(config.databaseUrl);
    connection = await Connection.connect({ address: config.temporal.address as string });
    app = await buildServer({ config, pool, temporal: new Client({ connection }) }, { logger: false });
  });
  afterAll(async () => {
    await app?.close();
    await connection?.close();
    await pool?.end();
  });

  it('GET /healthz answers while the process is up', async () => {
    const res = await app.inject({ method: 'GET', url: '/healthz' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok' });
  });

  it('GET /readyz reports Postgres and Temporal reachable', async () => {
    const res = await app.inject({ method: 'GET', url: '/readyz' });
    expect(res.json()).toEqual({ status: 'ready', checks: { postgres: 'ok', temporal: 'ok' } });
    expect(res.statusCode).toBe(200);
  });

  it('GET /readyz is 503 naming Postgres when the database is unreachable', async () => {
    const brokenPool = createPool('postgres://postgres@127.0.0.1:1/nothing');
    const broken = await buildServer(
      { config, pool: brokenPool, temporal: new Client({ connection }) },
      { logger: false },
    );
    try {
      const res = await broken.inject({ method: 'GET', url: '/readyz' });
      expect(res.statusCode).toBe(503);
      expect(res.json().checks).toEqual({ postgres: 'unavailable', temporal: 'ok' });
    } finally {
      await broken.close();
      await brokenPool.end();
    }
  });

  it('unknown routes get the error shape, not a stack trace', async () => {
    const res = await app.inject({ method: 'GET', url: '/nope' });
    expect(res.statusCode).toBe(404);
    expect(res.json().error.code).toBe('route_not_found');
    expect(res.headers['request-id']).toMatch(/^req_/);
  });
});
