import { execFile, spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { publishEvent } from '../../../src/domain/events';
import { parcel } from '../../helpers/delivery';
import { testConfig } from '../../helpers/env';
import { createAccount } from '../../helpers/fixtures';
import { useDeliveryHarness } from '../../helpers/harness';
import { independentlyVerified } from '../../helpers/independent-verifier';
import { waitFor } from '../../helpers/wait';
import { testDatabaseUrl } from '../../helpers/database';

const BIN = path.join(__dirname, '..', '..', '..', 'src', 'cli', 'bin.js');
/** Each CLI run compiles the sources through tsx: several seconds on a loaded 2-core box. */
const CLI_TEST_TIMEOUT_MS = 240_000;

interface Forwarded {
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

describe('CLI: listen, events, webhooks (acting for a merchant)', () => {
  // No WEBHOOK_ALLOW_PRIVATE_TARGETS: the worker reaches the listen session through its pinned certificate alone.
  const config = testConfig({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false', DELIVERY_RETRY_DELAYS: '200ms,200ms' });
  const h = useDeliveryHarness(config);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: testDatabaseUrl(),
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    TEMPORAL_TASK_QUEUE: config.temporal.taskQueue,
    LOG_LEVEL: 'silent',
  };
  delete env.WEBHOOK_ALLOW_PRIVATE_TARGETS;
  let forwardTarget: http.Server;
  let forwardUrl: string;
  const forwarded: Forwarded[] = [];

  beforeAll(async () => {
    forwardTarget = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        forwarded.push({ headers: req.headers, body: Buffer.concat(chunks) });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => forwardTarget.listen(0, '127.0.0.1', resolve));
    forwardUrl = `http://127.0.0.1:${(forwardTarget.address() as AddressInfo).port}/hooks`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => forwardTarget?.close(() => resolve()));
  });

  function cli(...args: string[]): Promise<{ code: number; json: any; stdout: string; stderr: string }> {
    return new Promise((resolve) => {
      execFile(process.execPath, [BIN, ...args], { env, timeout: 60_000 }, (error, stdout, stderr) => {
        let json: unknown;
        try {
          json = JSON.parse(stdout);
        } catch {
          json = undefined;
        }
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, json, stdout, stderr });
      });
    });
  }

  const publish = (accountId: string) =>
    publishEvent(
      { pool: h.tw.pool },
      { accountId, livemode: false, type: 'parcel.delivered', data: { parcel: parcel() } },
    );

  it(
    'listen registers a loopback endpoint, prints each verified delivery, forwards it, and removes the endpoint on SIGINT',
    async () => {
      const accountId = await createAccount(h.tw.pool);
      const child: ChildProcess = spawn(
        process.execPath,
        [BIN, 'listen', '--account', accountId, '--forward-to', forwardUrl, '--json'],
        {
          env,
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      const lines: any[] = [];
      let buffered = '';
      child.stdout!.on('data', (chunk: Buffer) => {
        buffered += chunk.toString();
        const parts = buffered.split('\n');
        buffered = parts.pop() ?? '';
        for (const part of parts) if (part.trim()) lines.push(JSON.parse(part));
      });
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      try {
        const listening = await waitFor(() => lines.find((l) => l.type === 'listening'), {
          timeoutMs: 60_000,
          what: 'the listening line',
        });
        expect(listening).toMatchObject({
          endpoint_id: expect.stringMatching(/^we_/),
          url: expect.stringMatching(/^https:\/\/127\.0\.0\.1:\d+\/$/),
        });
        const { rows } = await h.tw.pool.query(
          'SELECT livemode, local_certificate IS NOT NULL AS pinned FROM webhook_endpoints WHERE id = $1',
          [listening.endpoint_id],
        );
        expect(rows[0]).toEqual({ livemode: false, pinned: true });

        const published = await publish(accountId);
        expect(published.endpointIds).toEqual([listening.endpoint_id]);
        const delivery = await waitFor(() => lines.find((l) => l.type === 'delivery'), {
          timeoutMs: 30_000,
          what: 'the delivery line',
        });
        expect(delivery).toMatchObject({
          event_id: published.event.id,
          event_type: 'parcel.delivered',
          attempt: 1,
          trigger: 'automatic',
          signature_verified: true,
          forwarded_status: 204,
        });
        const [copy] = forwarded;
        expect(JSON.parse(copy!.body.toString()).id).toBe(published.event.id);
        expect(independentlyVerified(copy!.headers['service-signature'], copy!.body, listening.secret)).toBe(true);
        expect(copy!.headers['service-event']).toBe('parcel.delivered');
        expect(copy!.headers['service-delivery']).toMatch(/^dlv_/);
      } finally {
        child.kill('SIGINT');
      }
      expect(await exited).toBe(0);
      const { rows } = await h.tw.pool.query(
        'SELECT deleted_at IS NOT NULL AS deleted FROM webhook_endpoints WHERE account_id = $1',
        [accountId],
      );
      expect(rows).toEqual([{ deleted: true }]);
    },
    CLI_TEST_TIMEOUT_MS,
  );

  /** A listen session's process and the lines it printed (--json). */
  function startListen(...args: string[]) {
    const child: ChildProcess = spawn(process.execPath, [BIN, 'listen', ...args, '--json'], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const lines: any[] = [];
    let buffered = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const parts = buffered.split('\n');
      buffered = parts.pop() ?? '';
      for (const part of parts) if (part.trim()) lines.push(JSON.parse(part));
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const listening = () =>
      waitFor(() => lines.find((l) => l.type === 'listening'), { timeoutMs: 60_000, what: 'the listening line' });
    return { child, lines, exited, listening };
  }

  it(
    "listen keeps a parcel's events in order by default and prints each one's parcel and sequence; --unordered opts out",
    async () => {
      const accountId = await createAccount(h.tw.pool);
      const other = await createAccount(h.tw.pool);
      const ordered = startListen('--account', accountId);
      const unordered = startListen('--account', other, '--unordered');
      try {
        const [listening, loose] = await Promise.all([ordered.listening(), unordered.listening()]);
        expect(listening).toMatchObject({ ordering: 'parcel' });
        expect(loose).toMatchObject({ ordering: 'none' });
        const orderings = await h.tw.pool.query<{ id: string; ordering: string }>(
          'SELECT id, ordering FROM webhook_endpoints WHERE id = ANY ($1)',
          [[listening.endpoint_id, loose.endpoint_id]],
        );
        expect(Object.fromEntries(orderings.rows.map((r) => [r.id, r.ordering]))).toEqual({
          [listening.endpoint_id]: 'parcel',
          [loose.endpoint_id]: 'none',
        });

        const eventIds: string[] = [];
        for (let i = 0; i < 3; i++) {
          const published = await publishEvent(
            { pool: h.tw.pool },
            { accountId, livemode: false, type: 'parcel.in_transit', data: { parcel: parcel({ id: 'p_listen' }) } },
          );
          eventIds.push(published.event.id);
        }
        const delivered = await waitFor(
          () => {
            const found = ordered.lines.filter((l) => l.type === 'delivery');
            return found.length >= 3 ? found : undefined;
          },
          { timeoutMs: 60_000, what: 'three delivery lines' },
        );
        expect(delivered.map((l) => [l.event_id, l.parcel_id, l.sequence])).toEqual([
          [eventIds[0], 'p_listen', 1],
          [eventIds[1], 'p_listen', 2],
          [eventIds[2], 'p_listen', 3],
        ]);
      } finally {
        ordered.child.kill('SIGINT');
        unordered.child.kill('SIGINT');
      }
      expect(await ordered.exited).toBe(0);
      expect(await unordered.exited).toBe(0);
    },
    CLI_TEST_TIMEOUT_MS,
  );

  it(
    'events list|get|resend and webhooks test|recover act for a merchant through the same functions as the API',
    async () => {
      const accountId = await createAccount(h.tw.pool);
      const { rows } = await h.tw.pool.query(
        `INSERT INTO webhook_endpoints (id, account_id, livemode, url, secret) VALUES ('we_cli' || substr(md5(random()::text), 1, 20), $1, false, $2, 'whsec_cli')
       RETURNING id`,
        [accountId, `${h.receiver.url}/cli`],
      );
      const endpointId = rows[0].id as string;
      const scope = ['--account', accountId, '--mode', 'test', '--json'];
      const sent = await cli('webhooks', 'test', endpointId, '--type', 'parcel.in_transit', ...scope);
      expect(sent.code, sent.stdout + sent.stderr).toBe(0);
      expect(sent.json).toMatchObject({ object: 'event', type: 'parcel.in_transit' });
      // This file's worker refuses private targets, so these deliveries fail (ssrf_blocked): what matters here is
      // that the CLI made and started them; the API tests watch them arrive.

      const listed = await cli('events', 'list', ...scope);
      expect(listed.json.data.map((e: { id: string }) => e.id)).toEqual([sent.json.id]);
      const resent = await cli('events', 'resend', sent.json.id, ...scope);
      expect(resent.json).toEqual({
        object: 'resend',
        event_id: sent.json.id,
        endpoint_ids: [endpointId],
        livemode: false,
      });
      const got = await cli('events', 'get', sent.json.id, ...scope);
      expect(got.json.deliveries.map((d: { trigger: string }) => d.trigger)).toEqual(['test', 'resend']);
      const recovered = await cli('webhooks', 'recover', endpointId, '--since', '0', ...scope);
      expect(recovered.json).toMatchObject({ object: 'recovery', endpoint_id: endpointId });

      const missing = await cli('events', 'get', 'evt_nope', ...scope);
      expect(missing.code).not.toBe(0);
      expect(missing.json.error.code).toBe('resource_missing');
      const otherMode = await cli('events', 'get', sent.json.id, '--account', accountId, '--mode', 'live', '--json');
      expect(otherMode.json.error.code).toBe('resource_missing');
    },
    CLI_TEST_TIMEOUT_MS,
  );
});
