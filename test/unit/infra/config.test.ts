import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import {
  ConfigError,
  loadConfig,
  loadDatabaseUrl,
  repeatedBlock,
  SECRET_SETTINGS,
  unsafeSettingWarnings,
  withLocalEncryptionKey,
} from '../../../src/infra/config';
import { formatDuration, parseDuration, parseDurationList } from '../../../src/core/durations';

const root = path.join(__dirname, '..', '..', '..');

describe('config', () => {
  it('has defaults for local use, with the default ladder', () => {
    const config = loadConfig({});
    expect(config.port).toBe(3000);
    expect(config.temporal.address).toBeUndefined();
    expect(config.temporal.devPort).toBe(7233);
    expect(config.temporal.uiPort).toBe(8233);
    expect(config.temporal.namespace).toBe('default');
    expect(config.delivery.retryDelaysMs).toEqual([10_000, 60_000, 600_000, 3_600_000, 21_600_000]);
    expect(config.delivery.timeoutMs).toBe(10_000);
    expect(config.delivery.failingThreshold).toBe(3);
    expect(config.delivery.workerConcurrency).toBe(400);
    expect(config.delivery.workerWorkflowTasks).toBe(400);
    expect(config.webhook.allowPrivateTargets).toBe(false);
    expect(config.webhook.secretEncryptionKeys).toEqual([]);
    expect(config.metrics).toEqual({ port: 9464, host: '127.0.0.1', nextPortsToTry: 9 });
  });

  it('reads the worker concurrency, refusing what it cannot be', () => {
    const config = loadConfig({ WORKER_CONCURRENCY: '50' });
    expect(config.delivery.workerConcurrency).toBe(50);
    expect(() => loadConfig({ WORKER_CONCURRENCY: '1' })).toThrow(ConfigError);
    expect(() => loadConfig({ WORKER_CONCURRENCY: 'many' })).toThrow(ConfigError);
  });

  it('reads the workflow tasks a worker runs at once, refusing what it cannot be', () => {
    expect(loadConfig({ WORKER_WORKFLOW_TASKS: '64' }).delivery.workerWorkflowTasks).toBe(64);
    expect(loadConfig({ WORKER_CONCURRENCY: '50' }).delivery.workerWorkflowTasks).toBe(50);
    // Never more than the sticky cache, which holds WORKER_CONCURRENCY workflows: the SDK's rule.
    expect(() => loadConfig({ WORKER_CONCURRENCY: '50', WORKER_WORKFLOW_TASKS: '64' })).toThrow(ConfigError);
    expect(() => loadConfig({ WORKER_WORKFLOW_TASKS: '1' })).toThrow(ConfigError);
    expect(() => loadConfig({ WORKER_WORKFLOW_TASKS: 'few' })).toThrow(ConfigError);
  });

  it('METRICS_PORT=0 disables the metrics page', () => {
    expect(loadConfig({ METRICS_PORT: '0', METRICS_HOST: '0.0.0.0' }).metrics).toEqual({
      port: 0,
      host: '0.0.0.0',
      nextPortsToTry: 0,
    });
    // A port named is that port only; unset, the next nine are tried when 9464 is taken.
    expect(loadConfig({ METRICS_PORT: '9464' }).metrics.nextPortsToTry).toBe(0);
  });

  it('reads INTERNAL_PORT (unset: the internal routes stay on PORT) and TRUST_PROXY (off by default)', () => {
    expect(loadConfig({}).internalPort).toBeUndefined();
    expect(loadConfig({}).trustProxy).toBe(false);
    expect(loadConfig({ INTERNAL_PORT: '3001' }).internalPort).toBe(3001);
    expect(loadConfig({ TRUST_PROXY: 'true' }).trustProxy).toBe(true);
    expect(loadConfig({ TRUST_PROXY: 'false' }).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8, 127.0.0.1,::1, fd00::/8' }).trustProxy).toEqual([
      '10.0.0.0/8',
      '127.0.0.1',
      '::1',
      'fd00::/8',
    ]);
  });

  it('reads the contract variables', () => {
    const config = loadConfig({
      PORT: '8080',
      DATABASE_URL: 'postgresql://u@db:5432/x',
      TEMPORAL_ADDRESS: 'temporal:7233',
      DELIVERY_RETRY_DELAYS: '100ms, 1s',
      DELIVERY_TIMEOUT: '2s',
      ENDPOINT_FAILING_THRESHOLD: '5',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_SECRET_ENCRYPTION_KEY: 'a'.repeat(64),
      INTERNAL_API_TOKEN: 'f3c9a1d27be84e0c9d1a5b7e2c4f6a80',
    });
    expect(config.port).toBe(8080);
    expect(config.temporal.address).toBe('temporal:7233');
    expect(config.delivery.retryDelaysMs).toEqual([100, 1000]);
    expect(config.delivery.timeoutMs).toBe(2000);
    expect(config.delivery.maxAgeMs).toBe(3 * 86_400_000);
    expect(loadConfig({ DELIVERY_MAX_AGE: '90m' }).delivery.maxAgeMs).toBe(5_400_000);
    expect(config.delivery.failingThreshold).toBe(5);
    expect(config.webhook.allowPrivateTargets).toBe(true);
    expect(config.webhook.secretEncryptionKeys.map((key) => key.length)).toEqual([32]);
  });

  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['DATABASE_URL', 'mysql://x/y'],
    ['DATABASE_URL', 'not a url'],
    ['DELIVERY_RETRY_DELAYS', '10s,,1m'],
    ['DELIVERY_RETRY_DELAYS', '10 parsecs'],
    ['DELIVERY_TIMEOUT', '0s'],
    ['DELIVERY_MAX_AGE', 'forever'],
    ['ENDPOINT_FAILING_THRESHOLD', '0'],
    ['WEBHOOK_ALLOW_PRIVATE_TARGETS', 'maybe'],
    ['WEBHOOK_SECRET_ENCRYPTION_KEY', 'short'],
    // Buffer's lenient base64 decoding skips the stray character and reads another 32-byte key
    ['WEBHOOK_SECRET_ENCRYPTION_KEY', `${'A'.repeat(43)}!=`],
    ['WEBHOOK_SECRET_ENCRYPTION_KEY', `${'A'.repeat(20)} ${'A'.repeat(23)}=`],
    ['WEBHOOK_SECRET_ENCRYPTION_KEY', `${'a'.repeat(63)}g`],
    ['WEBHOOK_CA_FILE', '/nonexistent/ca.pem'],
    ['TEMPORAL_CLI', '/nonexistent/temporal'],
    ['INTERNAL_API_TOKEN', 'short'],
    ['INTERNAL_API_TOKEN', 'internal-token-of-31-characters'],
    ['INTERNAL_API_TOKEN', 'x'.repeat(40)],
    ['INTERNAL_API_TOKEN', 'abab'.repeat(10)],
    ['INTERNAL_API_TOKEN', 'a1b2c3d4'.repeat(4)],
    ['INTERNAL_API_TOKEN', 'Kq83nZ0pWx'.repeat(4)],
    ['INTERNAL_API_TOKEN', '0123456789abcdef'.repeat(2)],
    ['INTERNAL_API_TOKEN', `f3c9a1d27be8${'4e0c'.repeat(5)}`],
    ['INTERNAL_API_TOKEN', 'change-me-internal-token-0123456789'],
    ['INTERNAL_API_TOKEN', 'CHANGEME-please-to-a-random-value-0123'],
    ['INTERNAL_API_TOKEN', 'an-example-internal-token-0123456789'],
    ['INTERNAL_PORT', '3000'],
    ['INTERNAL_PORT', 'internal'],
    ['TRUST_PROXY', 'maybe'],
    ['TRUST_PROXY', '10.0.0.0/8, proxy.internal'],
    ['TRUST_PROXY', '300.1.1.1'],
    ['TRUST_PROXY', '10.0.0.0/33'],
    ['SMTP_URL', 'http://mail'],
    ['METRICS_PORT', 'nine'],
    ['METRICS_PORT', '65536'],
    ['PUBLIC_URL', 'https://hooks.example.com/path'],
    ['WEBHOOK_SECRETS_REQUIRE_SEALED', 'true'],
    ['WEBHOOK_SECRETS_REQUIRE_SEALED', 'maybe'],
  ])('rejects %s=%s with one line naming it', (name, value) => {
    let error: unknown;
    try {
      loadConfig({ [name]: value });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).variable).toBe(name);
    expect((error as Error).message).toMatch(new RegExp(`^config: ${name} `));
    expect((error as Error).message).not.toContain('\n');
  });

  it('stops a process with exactly one clear line on stderr', () => {
    let stderr = '';
    let status: number | null = 0;
    try {
      execFileSync(process.execPath, [path.join(root, 'src', 'cli', 'bin.js'), 'accounts', 'list'], {
        env: { ...process.env, DELIVERY_TIMEOUT: 'soon' },
        stdio: ['ignore', 'pipe', 'pipe'],
        timeout: 30_000,
      });
    } catch (err) {
      stderr = String((err as { stderr: Buffer }).stderr);
      status = (err as { status: number | null }).status;
    }
    expect(status).not.toBe(0);
    expect(stderr.trim().split('\n')).toHaveLength(1);
    expect(stderr).toContain('DELIVERY_TIMEOUT');
  });
});

describe('the secret encryption key ring', () => {
  const a = 'a1'.repeat(32);
  const b = Buffer.alloc(32, 7).toString('base64');
  const hex = (keys: readonly Buffer[]) => keys.map((key) => key.toString('hex'));

  it('reads WEBHOOK_SECRET_ENCRYPTION_KEYS newest first, and WEBHOOK_SECRET_ENCRYPTION_KEY as a one-key ring or the oldest', () => {
    expect(hex(loadConfig({ WEBHOOK_SECRET_ENCRYPTION_KEYS: `${a}, ${b}` }).webhook.secretEncryptionKeys)).toEqual([
      a,
      '07'.repeat(32),
    ]);
    expect(hex(loadConfig({ WEBHOOK_SECRET_ENCRYPTION_KEY: a }).webhook.secretEncryptionKeys)).toEqual([a]);
    const both = loadConfig({ WEBHOOK_SECRET_ENCRYPTION_KEYS: b, WEBHOOK_SECRET_ENCRYPTION_KEY: a });
    expect(hex(both.webhook.secretEncryptionKeys)).toEqual(['07'.repeat(32), a]);
    const same = loadConfig({ WEBHOOK_SECRET_ENCRYPTION_KEYS: a, WEBHOOK_SECRET_ENCRYPTION_KEY: a });
    expect(hex(same.webhook.secretEncryptionKeys)).toEqual([a]);
  });

  it.each([
    [`${'a1'.repeat(32)},short`],
    [`${'a1'.repeat(32)},,${'b2'.repeat(32)}`],
    [`${'a1'.repeat(32)},${'a1'.repeat(32)}`],
  ])('refuses WEBHOOK_SECRET_ENCRYPTION_KEYS=%s in one line, never echoing a key', (value) => {
    let error: Error | undefined;
    try {
      loadConfig({ WEBHOOK_SECRET_ENCRYPTION_KEYS: value });
    } catch (err) {
      error = err as Error;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).variable).toBe('WEBHOOK_SECRET_ENCRYPTION_KEYS');
    expect(error?.message).not.toContain('a1a1');
  });

  it('refuses to run with NODE_ENV=production without a key, in one line', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(
      /^config: WEBHOOK_SECRET_ENCRYPTION_KEYS must be set when NODE_ENV=production/,
    );
    const production = {
      NODE_ENV: 'production',
      WEBHOOK_SECRET_ENCRYPTION_KEY: a,
      PUBLIC_URL: 'https://hooks.example.com',
    };
    expect(loadConfig(production).webhook.secretEncryptionKeys).toHaveLength(1);
    expect(loadConfig({ NODE_ENV: 'development' }).webhook.secretEncryptionKeys).toEqual([]);
  });

  it('warns at start when secrets would be stored plain', () => {
    expect(unsafeSettingWarnings(loadConfig({})).join('\n')).toMatch(/WEBHOOK_SECRET_ENCRYPTION_KEYS is not set/);
    expect(unsafeSettingWarnings(loadConfig({ WEBHOOK_SECRET_ENCRYPTION_KEYS: a }))).toEqual([]);
  });

  it('the API process exits with the one line under NODE_ENV=production without a key', () => {
    let stderr = '';
    let status: number | null = 0;
    try {
      execFileSync(process.execPath, ['--require', 'tsx/cjs', path.join(root, 'src', 'api', 'server.ts')], {
        env: {
          ...process.env,
          NODE_ENV: 'production',
          WEBHOOK_SECRET_ENCRYPTION_KEYS: '',
          WEBHOOK_SECRET_ENCRYPTION_KEY: '',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
        timeout: 30_000,
      });
    } catch (err) {
      stderr = String((err as { stderr: Buffer }).stderr);
      status = (err as { status: number | null }).status;
    }
    expect(status).toBe(78);
    expect(stderr.trim().split('\n')).toEqual([
      expect.stringMatching(/^config: WEBHOOK_SECRET_ENCRYPTION_KEYS must be set when NODE_ENV=production/),
    ]);
  });
});

describe('the local development key', () => {
  const config = (dataDir: string) => loadConfig({ PARCEL_DATA_DIR: dataDir });

  it('is made once under PARCEL_DATA_DIR, owner-only, and read by every later process', () => {
    const dataDir = path.join(mkdtempSync(path.join(tmpdir(), 'parcel-key-')), 'data');
    expect(withLocalEncryptionKey(config(dataDir)).webhook.secretEncryptionKeys).toEqual([]);
    const made = withLocalEncryptionKey(config(dataDir), { create: true }).webhook.secretEncryptionKeys;
    expect(made).toHaveLength(1);
    const file = path.join(dataDir, 'secret-encryption.key');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8').trim()).toBe(made[0]!.toString('hex'));
    expect(withLocalEncryptionKey(config(dataDir), { create: true }).webhook.secretEncryptionKeys).toEqual(made);
    expect(withLocalEncryptionKey(config(dataDir)).webhook.secretEncryptionKeys).toEqual(made);
    expect(readdirSync(dataDir)).toEqual(['secret-encryption.key']);
  });

  it('gives way to a configured ring, and a damaged file is a config error naming PARCEL_DATA_DIR', () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'parcel-key-'));
    const configured = loadConfig({ PARCEL_DATA_DIR: dataDir, WEBHOOK_SECRET_ENCRYPTION_KEYS: 'a1'.repeat(32) });
    expect(withLocalEncryptionKey(configured, { create: true })).toBe(configured);
    expect(readdirSync(dataDir)).toEqual([]);
    writeFileSync(path.join(dataDir, 'secret-encryption.key'), 'not a key\n');
    expect(() => withLocalEncryptionKey(config(dataDir))).toThrow(
      /^config: PARCEL_DATA_DIR holds no usable local encryption key/,
    );
  });

  it('lives in a git-ignored directory by default', () => {
    expect(loadConfig({}).dataDir).toBe('.data');
    expect(readFileSync(path.join(root, '.gitignore'), 'utf8').split('\n')).toContain('.data/');
  });
});

describe('durations', () => {
  it('parses and formats', () => {
    expect(parseDuration('250ms')).toBe(250);
    expect(parseDuration('1.5s')).toBe(1500);
    expect(parseDurationList('10s,1m,10m,1h,6h').map(formatDuration)).toEqual(['10s', '1m', '10m', '1h', '6h']);
    expect(() => parseDuration('10')).toThrow();
  });
});

describe('tokens that are patterns, not random', () => {
  it('finds a block repeated over the whole token or over a run of 16 characters', () => {
    expect(repeatedBlock('a1b2c3d4'.repeat(4))).toBe('a1b2c3d4');
    expect(repeatedBlock('Kq83nZ0pWx'.repeat(4))).toBe('Kq83nZ0pWx');
    expect(repeatedBlock(`Zr81mQ${'xy'.repeat(8)}Lp04tV77`)).toBe('xy');
    expect(repeatedBlock('internal-token-for-tests-0123456789')).toBeUndefined();
  });

  it('accepts random tokens, as openssl rand makes them', () => {
    for (let i = 0; i < 500; i += 1) {
      const hex = randomBytes(32).toString('hex');
      const base64 = randomBytes(32).toString('base64');
      expect(repeatedBlock(hex), hex).toBeUndefined();
      expect(repeatedBlock(base64), base64).toBeUndefined();
      expect(loadConfig({ INTERNAL_API_TOKEN: hex }).internalApiToken).toBe(hex);
    }
  });
});

describe('secrets from files (<NAME>_FILE)', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'config-secrets-'));
  const file = (name: string, content: string) => {
    const at = path.join(dir, name);
    writeFileSync(at, content);
    return at;
  };
  const token = randomBytes(32).toString('hex');

  it('reads every secret setting from the file its _FILE names, trimmed', () => {
    const config = loadConfig({
      INTERNAL_API_TOKEN_FILE: file('token', `${token}\n`),
      DATABASE_URL_FILE: file('db', 'postgres://app:s3cret@db:5432/parcel_webhooks\n'),
      SMTP_URL_FILE: file('smtp', 'smtps://mailer:pw@mail.example.com:465'),
      TEMPORAL_API_KEY_FILE: file('temporal', 'temporal-cloud-key\n'),
      WEBHOOK_SECRET_ENCRYPTION_KEYS_FILE: file('keys', `${'a1'.repeat(32)},${'b2'.repeat(32)}\n`),
      WEBHOOK_SECRET_ENCRYPTION_KEY_FILE: file('key', 'c3'.repeat(32)),
    });
    expect(config.internalApiToken).toBe(token);
    expect(config.databaseUrl).toBe('postgres://app:s3cret@db:5432/parcel_webhooks');
    expect(config.smtpUrl).toBe('smtps://mailer:pw@mail.example.com:465');
    expect(config.temporal.apiKey).toBe('temporal-cloud-key');
    expect(config.webhook.secretEncryptionKeys.map((key) => key.toString('hex'))).toEqual([
      'a1'.repeat(32),
      'b2'.repeat(32),
      'c3'.repeat(32),
    ]);
    expect(loadDatabaseUrl({ DATABASE_URL_FILE: file('db2', 'postgres://x@db/y') })).toBe('postgres://x@db/y');
  });

  it('refuses a setting given both ways, a file that cannot be read, and checks the value read as any other', () => {
    for (const name of SECRET_SETTINGS) {
      expect(() => loadConfig({ [name]: 'x', [`${name}_FILE`]: file('both', 'x') }), name).toThrow(
        new RegExp(`^config: ${name}_FILE and ${name} are both set`),
      );
    }
    expect(() => loadConfig({ INTERNAL_API_TOKEN_FILE: path.join(dir, 'missing') })).toThrow(
      /^config: INTERNAL_API_TOKEN_FILE names a file that cannot be read: .*missing \(ENOENT\)$/,
    );
    expect(() => loadConfig({ INTERNAL_API_TOKEN_FILE: file('weak', 'short') })).toThrow(
      /^config: INTERNAL_API_TOKEN must be/,
    );
    // Empty, as an empty variable: unset.
    expect(loadConfig({ SMTP_URL_FILE: file('empty', '\n') }).smtpUrl).toBeUndefined();
  });
});

describe('production settings', () => {
  const key = 'a1'.repeat(32);

  it('requires an https PUBLIC_URL under NODE_ENV=production, in one line naming it', () => {
    for (const publicUrl of [undefined, 'http://hooks.example.com']) {
      let error: unknown;
      try {
        loadConfig({ NODE_ENV: 'production', WEBHOOK_SECRET_ENCRYPTION_KEYS: key, PUBLIC_URL: publicUrl });
      } catch (err) {
        error = err;
      }
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).variable).toBe('PUBLIC_URL');
      expect((error as Error).message).toMatch(/^config: PUBLIC_URL must be an https origin when NODE_ENV=production/);
    }
    expect(
      loadConfig({
        NODE_ENV: 'production',
        WEBHOOK_SECRET_ENCRYPTION_KEYS: key,
        PUBLIC_URL: 'https://hooks.example.com',
      }).publicUrl,
    ).toBe('https://hooks.example.com');
    expect(loadConfig({ PUBLIC_URL: 'http://localhost:3000' }).publicUrl).toBe('http://localhost:3000');
  });

  it('WEBHOOK_SECRETS_REQUIRE_SEALED makes the ring sealed-only, and needs a key', () => {
    expect(loadConfig({ WEBHOOK_SECRET_ENCRYPTION_KEYS: key }).webhook.secretEncryptionKeys.sealedOnly).toBeUndefined();
    const ring = loadConfig({ WEBHOOK_SECRET_ENCRYPTION_KEYS: key, WEBHOOK_SECRETS_REQUIRE_SEALED: 'true' }).webhook
      .secretEncryptionKeys;
    expect(ring.sealedOnly).toBe(true);
    expect(ring.map((held) => held.toString('hex'))).toEqual([key]);
    expect(() => loadConfig({ WEBHOOK_SECRETS_REQUIRE_SEALED: 'true' })).toThrow(
      /^config: WEBHOOK_SECRETS_REQUIRE_SEALED needs WEBHOOK_SECRET_ENCRYPTION_KEYS/,
    );
  });
});
