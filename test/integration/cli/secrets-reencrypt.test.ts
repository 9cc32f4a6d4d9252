import { createCipheriv, randomBytes } from 'node:crypto';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadEndpointForDelivery } from '../../../src/attempt';
import {
  encryptionKeyId,
  isOnNewestKey,
  openSecret,
  sealSecret,
  SecretUnavailableError,
} from '../../../src/core/secrets';
import { startApi } from '../../../src/api/server';
import { listStoredSecrets, replaceStoredSecrets } from '../../../src/db/endpoints';
import { rotateEndpointSecret } from '../../../src/domain/endpoints';
import { publishEvent } from '../../../src/domain/events';
import { openHeaders, sealHeaders } from '../../../src/domain/endpoint-headers';
import { reencryptSecrets } from '../../../src/domain/secret-reencryption';
import { createEndpoint, deliveryResult, parcel } from '../../helpers/delivery';
import { testConfig } from '../../helpers/env';
import { createAccount } from '../../helpers/fixtures';
import { useDeliveryHarness } from '../../helpers/harness';
import { independentlyVerified } from '../../helpers/independent-verifier';
import { runCli } from '../../helpers/cli';
import { CLI_ACTOR } from '../../../src/domain/audit-log';

/**
 * `secrets reencrypt` against real Postgres: plain, old-key and old-form secrets moved onto the newest key in
 * batches, an interrupted run resumed by the CLI, a rotation racing a batch kept, and deliveries signed right
 * by a worker that holds the new key only; an endpoint's sealed custom headers move alike and still reach the
 * receiver.
 */

const OLD = randomBytes(32);
const NEW = randomBytes(32);

/** The v1 stored form, which still opens: no key id, no associated data. */
function sealV1(plain: string, key: Buffer): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const ciphertext = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return `enc:v1:${iv.toString('base64')}:${cipher.getAuthTag().toString('base64')}:${ciphertext.toString('base64')}`;
}

const cli = (env: Record<string, string>, ...args: string[]) => runCli(args, env);

describe('secrets reencrypt', () => {
  // The worker holds the new key only: a delivery signs right only once its endpoint's secret has moved.
  const h = useDeliveryHarness(
    testConfig({ WEBHOOK_SECRET_ENCRYPTION_KEYS: NEW.toString('hex'), DELIVERY_RETRY_DELAYS: '100ms' }),
  );
  const ring = [NEW, OLD];
  /** The CLI's keys: the new one first, the old one still held. */
  const keysEnv = { WEBHOOK_SECRET_ENCRYPTION_KEYS: `${NEW.toString('hex')},${OLD.toString('hex')}` };
  /** The same keys with WEBHOOK_SECRETS_REQUIRE_SEALED, for an API on a free port and for reads. */
  const sealedOnly = testConfig({ ...keysEnv, WEBHOOK_SECRETS_REQUIRE_SEALED: 'true', HOST: '127.0.0.1', PORT: '0' });
  const sealedRing = sealedOnly.webhook.secretEncryptionKeys;

  const stored = async (id: string) =>
    (await h.tw.pool.query('SELECT secret, previous_secret FROM webhook_endpoints WHERE id = $1', [id])).rows[0] as {
      secret: string;
      previous_secret: string | null;
    };
  const setStored = (id: string, secret: string, previous: string | null = null) =>
    h.tw.pool.query(
      `UPDATE webhook_endpoints
          SET secret = $2, previous_secret = $3,
              previous_secret_expires_at = CASE WHEN $3::text IS NULL THEN NULL ELSE now() + interval '1 hour' END
        WHERE id = $1`,
      [id, secret, previous],
    );

  it(
    'moves plain, old-key and old-form secrets in batches; an interrupted run resumes; deliveries sign right after',
    { timeout: 180_000 },
    async () => {
      const accountId = await createAccount(h.tw.pool, { status: 'active' });
      const plains: Array<{ id: string; secret: string; previous?: string; path: string; form: string }> = [];
      const forms = ['plain', 'old-key', 'v1', 'rotated', 'current', 'plain', 'plain', 'old-key'] as const;
      for (const [index, form] of forms.entries()) {
        const route = `/reencrypt-${index}`;
        const endpoint = await createEndpoint(h.tw.pool, { accountId, url: `${h.receiver.url}${route}` });
        const previous = form === 'rotated' ? `whsec_previous${index}` : undefined;
        const sealed =
          form === 'old-key' || form === 'rotated'
            ? sealSecret(endpoint.secret, endpoint.id, [OLD])
            : form === 'v1'
              ? sealV1(endpoint.secret, OLD)
              : form === 'current'
                ? sealSecret(endpoint.secret, endpoint.id, [NEW])
                : endpoint.secret;
        await setStored(endpoint.id, sealed, previous ?? null);
        plains.push({ id: endpoint.id, secret: endpoint.secret, previous, path: route, form });
      }
      // The command's order: the database's, by id.
      const order = (await h.tw.pool.query<{ id: string }>('SELECT id FROM webhook_endpoints ORDER BY id')).rows.map(
        (row) => row.id,
      );
      plains.sort((a, b) => order.indexOf(a.id) - order.indexOf(b.id));
      const currentIndex = plains.findIndex((endpoint) => endpoint.form === 'current');

      // Interrupted after its first batch of 3: those rows moved, the rest untouched.
      const interrupted = reencryptSecrets(h.tw.pool, ring, {
        batchSize: 3,
        afterBatch: () => {
          throw new Error('interrupted');
        },
      });
      await expect(interrupted).rejects.toThrow('interrupted');
      for (const [index, endpoint] of plains.entries()) {
        const now = await stored(endpoint.id);
        expect(isOnNewestKey(now.secret, ring), endpoint.form).toBe(index < 3 || index === currentIndex);
        if (endpoint.previous) expect(isOnNewestKey(now.previous_secret as string, ring)).toBe(index < 3);
      }

      // A delivery reading mid-run opens either form.
      for (const endpoint of plains) {
        expect((await loadEndpointForDelivery(h.tw.pool, endpoint.id, ring))?.secrets).toEqual(
          endpoint.previous ? [endpoint.secret, endpoint.previous] : [endpoint.secret],
        );
      }

      // Resumed through the CLI: rows already on the newest key are skipped.
      const resumed = await cli(keysEnv, 'secrets', 'reencrypt', '--batch-size', '2', '--json');
      expect(resumed.code, resumed.stdout).toBe(0);
      const firstThreeCurrent = currentIndex < 3 ? 3 : 4;
      expect(resumed.json).toMatchObject({
        endpoints_scanned: plains.length,
        endpoints_already_current: firstThreeCurrent,
        endpoints_reencrypted: plains.length - firstThreeCurrent,
        endpoints_changed_meanwhile: 0,
        endpoints_unreadable: 0,
        batches: Math.ceil(plains.length / 2),
      });
      expect(resumed.stdout).not.toMatch(/whsec_/);
      expect(resumed.stdout).not.toContain(NEW.toString('hex'));

      // Everything opens with the new key alone, previous secrets included, and stays bound to its endpoint.
      for (const endpoint of plains) {
        const now = await stored(endpoint.id);
        expect(openSecret(now.secret, endpoint.id, [NEW])).toBe(endpoint.secret);
        if (endpoint.previous)
          expect(openSecret(now.previous_secret as string, endpoint.id, [NEW])).toBe(endpoint.previous);
        expect(JSON.stringify(now)).not.toContain('whsec_');
      }
      const again = await reencryptSecrets(h.tw.pool, ring);
      expect(again).toMatchObject({ endpoints_reencrypted: 0, endpoints_already_current: plains.length });

      // A worker holding only the new key signs every endpoint's delivery with the right secret.
      const published = await publishEvent(
        { pool: h.tw.pool },
        { accountId, livemode: false, type: 'parcel.delivered', data: { parcel: parcel() } },
      );
      const result = (await deliveryResult(h.tw.client, published.event.id)) as {
        endpoints: Array<{ outcome: string }>;
      };
      expect(result.endpoints.map((e) => e.outcome)).toEqual(plains.map(() => 'delivered'));
      for (const endpoint of plains) {
        const [request] = h.receiver.at(endpoint.path);
        expect(
          independentlyVerified(request?.headers['service-signature'], request!.rawBody, endpoint.secret),
          endpoint.path,
        ).toBe(true);
      }
    },
  );

  it('keeps a rotation that lands between a batch read and its write', async () => {
    const accountId = await createAccount(h.tw.pool);
    const endpoint = await createEndpoint(h.tw.pool, { accountId, url: 'https://merchant.example/hooks' });
    const [read] = (await listStoredSecrets(h.tw.pool, '', 10_000)).filter((row) => row.id === endpoint.id);
    const config = testConfig({ WEBHOOK_SECRET_ENCRYPTION_KEYS: NEW.toString('hex') });
    const rotated = await rotateEndpointSecret(
      { pool: h.tw.pool, config },
      { accountId, livemode: false },
      endpoint.id,
      CLI_ACTOR,
    );
    const replaced = await replaceStoredSecrets(h.tw.pool, [
      { read: read!, secret: sealSecret(endpoint.secret, endpoint.id, [NEW]), previousSecret: null },
    ]);
    expect(replaced).toEqual([]);
    expect(openSecret((await stored(endpoint.id)).secret, endpoint.id, [NEW])).toBe(rotated.secret);
  });

  it('reports a secret no key opens, lists its endpoint and moves the rest', async () => {
    const accountId = await createAccount(h.tw.pool);
    const lost = await createEndpoint(h.tw.pool, { accountId, url: 'https://merchant.example/lost' });
    await setStored(lost.id, sealSecret(lost.secret, lost.id, [randomBytes(32)]));
    const report = await reencryptSecrets(h.tw.pool, ring);
    expect(report.endpoints_unreadable).toBe(1);
    expect(report.unreadable_endpoint_ids).toEqual([lost.id]);
    await setStored(lost.id, lost.secret);
  });

  it(
    'says when an old key is safe to drop; WEBHOOK_SECRETS_REQUIRE_SEALED then refuses plain and unbound secrets',
    { timeout: 120_000 },
    async () => {
      const accountId = await createAccount(h.tw.pool);
      const endpoint = await createEndpoint(h.tw.pool, { accountId, url: 'https://merchant.example/sealed-only' });
      await setStored(endpoint.id, sealSecret(endpoint.secret, endpoint.id, [OLD]));
      // The old key still seals a secret until the run moves it; then nothing uses it.
      const moved = await cli(keysEnv, 'secrets', 'reencrypt', '--json');
      expect(moved.code, moved.stdout).toBe(0);
      expect(moved.json).toMatchObject({
        unused_key_ids: [encryptionKeyId(OLD)],
        still_used_key_ids: {},
        endpoints_unsealed_or_unbound: 0,
      });
      expect(moved.json.secrets_reencrypted).toBeGreaterThan(0);
      const idle = await cli(keysEnv, 'secrets', 'reencrypt');
      expect(idle.code, idle.stdout).toBe(0);
      expect(idle.stdout).toContain(
        `nothing to re-encrypt: every readable secret and header set is already on key ${encryptionKeyId(NEW)}`,
      );
      expect(idle.stdout).toContain(`safe to drop from WEBHOOK_SECRET_ENCRYPTION_KEYS: key(s) ${encryptionKeyId(OLD)}`);

      // Sealed-only: a plain secret (and a v1 one, sealed without its endpoint) refuses to open at read, and the
      // API refuses to start while one is stored; once re-encrypted, both work.
      expect((await loadEndpointForDelivery(h.tw.pool, endpoint.id, sealedRing))?.secrets).toEqual([endpoint.secret]);
      for (const unsealed of [endpoint.secret, sealV1(endpoint.secret, NEW)]) {
        await setStored(endpoint.id, unsealed);
        await expect(loadEndpointForDelivery(h.tw.pool, endpoint.id, sealedRing)).rejects.toBeInstanceOf(
          SecretUnavailableError,
        );
        await expect(startApi(sealedOnly)).rejects.toThrow(
          /^WEBHOOK_SECRETS_REQUIRE_SEALED=true but 1 endpoint\(s\) hold a plain or unbound secret/,
        );
        const flagged = await reencryptSecrets(h.tw.pool, [NEW]);
        expect(flagged.endpoints_unsealed_or_unbound).toBe(0);
      }
      const api = await startApi(sealedOnly);
      await api.close();
      expect((await loadEndpointForDelivery(h.tw.pool, endpoint.id, sealedRing))?.secrets).toEqual([endpoint.secret]);
    },
  );

  it(
    'moves sealed custom headers too, keeps their old key in use until they move, and the POST still carries them',
    { timeout: 120_000 },
    async () => {
      const accountId = await createAccount(h.tw.pool, { status: 'active' });
      const endpoint = await createEndpoint(h.tw.pool, { accountId, url: `${h.receiver.url}/reencrypt-headers` });
      await setStored(endpoint.id, sealSecret(endpoint.secret, endpoint.id, [NEW]));
      const headers = { 'X-Merchant-Token': 'tok_reencrypt_1', 'X-Route': 'eu-west' };
      const setHeaders = (value: string) =>
        h.tw.pool.query('UPDATE webhook_endpoints SET headers = $2 WHERE id = $1', [endpoint.id, value]);
      const storedHeaders = async () =>
        (
          await h.tw.pool.query<{ headers: string }>('SELECT headers FROM webhook_endpoints WHERE id = $1', [
            endpoint.id,
          ])
        ).rows[0]!.headers;

      // Headers the old key seals but that no key opens (bound to another endpoint): the old key stays in use.
      await setHeaders(sealHeaders(headers, 'we_another_endpoint', [OLD]));
      const stuck = await reencryptSecrets(h.tw.pool, ring);
      expect(stuck).toMatchObject({
        endpoints_unreadable: 1,
        unreadable_endpoint_ids: [endpoint.id],
        headers_reencrypted: 0,
      });
      expect(stuck.unused_key_ids).toEqual([]);
      expect(stuck.still_used_key_ids).toEqual({ [encryptionKeyId(OLD)]: 1 });

      // Headers sealed under the old key (the secret already on the new one) move; then the old key is unused.
      await setHeaders(sealHeaders(headers, endpoint.id, [OLD]));
      await expect(storedHeaders().then((value) => openHeaders(value, endpoint.id, [NEW]))).rejects.toBeInstanceOf(
        SecretUnavailableError,
      );
      const moved = await cli(keysEnv, 'secrets', 'reencrypt', '--json');
      expect(moved.code, moved.stdout).toBe(0);
      expect(moved.json).toMatchObject({
        endpoints_reencrypted: 1,
        secrets_reencrypted: 0,
        headers_reencrypted: 1,
        unused_key_ids: [encryptionKeyId(OLD)],
        still_used_key_ids: {},
        endpoints_unsealed_or_unbound: 0,
      });
      expect(moved.stdout).not.toContain('tok_reencrypt_1');
      const sealed = await storedHeaders();
      expect(isOnNewestKey(sealed, ring)).toBe(true);
      expect(sealed).not.toContain('tok_reencrypt_1');
      expect(openHeaders(sealed, endpoint.id, [NEW])).toEqual(headers);

      // The worker, holding the new key only (the old one dropped), sends them on a real delivery.
      const published = await publishEvent(
        { pool: h.tw.pool },
        { accountId, livemode: false, type: 'parcel.delivered', data: { parcel: parcel() } },
      );
      const result = (await deliveryResult(h.tw.client, published.event.id)) as {
        endpoints: Array<{ outcome: string }>;
      };
      expect(result.endpoints.map((e) => e.outcome)).toEqual(['delivered']);
      const [request] = h.receiver.at('/reencrypt-headers');
      expect(request?.headers['x-merchant-token']).toBe('tok_reencrypt_1');
      expect(request?.headers['x-route']).toBe('eu-west');

      // Sealed-only: plain headers refuse to open and keep the API from starting until re-encrypted.
      await setHeaders(JSON.stringify(headers));
      await expect(loadEndpointForDelivery(h.tw.pool, endpoint.id, sealedRing)).rejects.toBeInstanceOf(
        SecretUnavailableError,
      );
      await expect(startApi(sealedOnly)).rejects.toThrow(
        /^WEBHOOK_SECRETS_REQUIRE_SEALED=true but 1 endpoint\(s\) hold a plain or unbound secret or headers/,
      );
      const sealedNow = await reencryptSecrets(h.tw.pool, [NEW]);
      expect(sealedNow).toMatchObject({ headers_reencrypted: 1, endpoints_unsealed_or_unbound: 0 });
      const api = await startApi(sealedOnly);
      await api.close();
      expect((await loadEndpointForDelivery(h.tw.pool, endpoint.id, sealedRing))?.headers).toEqual(headers);
    },
  );

  it('refuses to run without a key', async () => {
    const run = await cli(
      {
        WEBHOOK_SECRET_ENCRYPTION_KEYS: '',
        WEBHOOK_SECRET_ENCRYPTION_KEY: '',
        PARCEL_DATA_DIR: path.join(__dirname, 'no-such-dir'),
      },
      'secrets',
      'reencrypt',
      '--json',
    );
    expect(run.code).toBe(1);
    expect(run.json.error.message).toMatch(/no encryption key is configured/);
  }, 60_000);
});
