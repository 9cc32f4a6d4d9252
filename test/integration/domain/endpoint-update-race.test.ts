import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool, type Pool } from '../../../src/db/pool';
import { registerEndpoint, updateEndpoint, type EndpointDeps } from '../../../src/domain/endpoints';
import { openHeaders } from '../../../src/domain/endpoint-headers';
import { testConfig } from '../../helpers/env';
import { createAccount } from '../../helpers/fixtures';
import { CLI_ACTOR } from '../../../src/domain/audit-log';

/**
 * A header change computes the whole new set from what it read. Were it written after a concurrent change of
 * origin (which dropped the hidden headers), it would put the old origin's credential back, now going to the new
 * origin. The pool below lets exactly that change of origin commit right after the header change's read.
 */
describe('an origin change racing a header change', () => {
  let pool: Pool;
  const config = testConfig();
  const ring = config.webhook.secretEncryptionKeys;

  beforeAll(() => {
    pool = createPool(config.databaseUrl);
  });
  afterAll(async () => {
    await pool?.end();
  });

  /** A pool whose first read of the endpoint is followed, before it returns, by `meanwhile`. */
  function racingPool(meanwhile: () => Promise<void>): Pool {
    let raced = false;
    const query = (async (...args: Parameters<Pool['query']>) => {
      const result = await (pool.query as (...a: unknown[]) => Promise<unknown>)(...args);
      const text = typeof args[0] === 'string' ? args[0] : '';
      if (!raced && /^\s*SELECT/.test(text) && text.includes('FROM webhook_endpoints')) {
        raced = true;
        await meanwhile();
      }
      return result;
    }) as Pool['query'];
    return Object.assign(Object.create(pool) as Pool, { query });
  }

  it('a header change read before a change of origin starts again, and the credential stays dropped', async () => {
    const accountId = await createAccount(pool);
    const scope = { accountId, livemode: false };
    const deps: EndpointDeps = { pool, config };
    const { id } = await registerEndpoint(
      deps,
      scope,
      {
        url: 'https://127.0.0.1:9/hooks',
        headers: { 'X-Route': 'eu', Authorization: 'Bearer merchant-credential' },
      },
      CLI_ACTOR,
    );
    // The concurrent request: the url moves to another origin, and the credential is dropped with it.
    const moveElsewhere = async () => {
      await updateEndpoint(deps, scope, id, { url: 'https://127.0.0.2:9/elsewhere' }, CLI_ACTOR);
    };
    const record = await updateEndpoint(
      { ...deps, pool: racingPool(moveElsewhere) },
      scope,
      id,
      {
        headers: { 'X-Route': 'us' },
      },
      CLI_ACTOR,
    );
    expect(record.url).toBe('https://127.0.0.2:9/elsewhere');
    const { rows } = await pool.query<{ headers: string }>('SELECT headers FROM webhook_endpoints WHERE id = $1', [id]);
    expect(openHeaders(rows[0]!.headers, id, ring)).toEqual({ 'X-Route': 'us' });
  });
});
