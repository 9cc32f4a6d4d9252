import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { PROFILES, type Receivers, type RegisteredEndpoint } from './receivers';
import { sleep } from './runtime';
import { cliEntry, ROOT } from './wiring';

/** The merchant of the run: an account and a test key made by the operator CLI, endpoints registered by the API. */
export interface Merchant {
  accountId: string;
  endpoints: RegisteredEndpoint[];
  /** The merchant's key, for the harness's own calls (resuming the paused endpoint). */
  key: string;
}

/** POST /v1/webhooks/:id/pause or /resume, retried while the API is not there. */
export async function lifecycleCall(apiUrl: string, key: string, id: string, action: 'pause' | 'resume') {
  let last = '';
  for (let attempt = 1; attempt <= 10; attempt++) {
    try {
      const res = await fetch(`${apiUrl}/v1/webhooks/${id}/${action}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}` },
        signal: AbortSignal.timeout(10_000),
      });
      const json = (await res.json()) as { status?: string };
      if (res.ok) return json;
      last = `${res.status} ${JSON.stringify(json).slice(0, 200)}`;
      if (res.status < 500) break;
    } catch (err) {
      last = (err as Error).message;
    }
    await sleep(1_000);
  }
  throw new Error(`${action} of ${id} failed: ${last}`);
}

async function cli(databaseUrl: string, args: string[]): Promise<Record<string, unknown>> {
  const { stdout } = await promisify(execFile)(process.execPath, [cliEntry(), ...args, '--json'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' },
    timeout: 60_000,
  });
  return JSON.parse(stdout) as Record<string, unknown>;
}

async function register(
  apiUrl: string,
  key: string,
  body: Record<string, unknown>,
): Promise<{ id: string; secret: string }> {
  let last = '';
  for (let attempt = 1; attempt <= 5; attempt++) {
    try {
      const res = await fetch(`${apiUrl}/v1/webhooks`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(10_000),
      });
      const json = (await res.json()) as { id?: string; secret?: string };
      if (res.ok && json.id && json.secret) return { id: json.id, secret: json.secret };
      last = `${res.status} ${JSON.stringify(json).slice(0, 200)}`;
      if (res.status < 500) break;
    } catch (err) {
      last = (err as Error).message;
    }
    await sleep(1_000);
  }
  throw new Error(`registering ${String(body.url)} failed: ${last}`);
}

/** `databaseUrl` is Postgres itself (not the proxy): setup happens before any fault. */
export async function createMerchant(options: {
  databaseUrl: string;
  apiUrl: string;
  receivers: Receivers;
  seed: number;
}): Promise<Merchant> {
  const account = await cli(options.databaseUrl, [
    'accounts',
    'create',
    '--name',
    `Chaos seed ${options.seed}`,
    '--status',
    'active',
  ]);
  const accountId = String(account.id);
  const key = await cli(options.databaseUrl, [
    'keys',
    'create',
    '--account',
    accountId,
    '--mode',
    'test',
    '--scopes',
    'all',
  ]);
  const endpoints: RegisteredEndpoint[] = [];
  for (const profile of PROFILES) {
    const url = options.receivers.url(profile);
    const body: Record<string, unknown> = { url, description: `chaos: ${profile.behaviour}` };
    if (profile.events !== 'all') body.events = profile.events;
    if (profile.ordering) body.ordering = profile.ordering;
    if (profile.rateLimit !== undefined) body.rate_limit = profile.rateLimit;
    const { id, secret } = await register(options.apiUrl, String(key.key), body);
    const endpoint = { profile, id, secret, url };
    if (profile.pausedForMs !== undefined) {
      const paused = await lifecycleCall(options.apiUrl, String(key.key), id, 'pause');
      if (paused.status !== 'paused') throw new Error(`pausing ${id} answered ${JSON.stringify(paused)}`);
    }
    options.receivers.attach(endpoint);
    endpoints.push(endpoint);
  }
  return { accountId, endpoints, key: String(key.key) };
}
