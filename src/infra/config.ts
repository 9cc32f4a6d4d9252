import { existsSync, readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { formatDuration, parseDuration, parseDurationList } from '../core/durations';
import { parseEncryptionKey, sealedOnlyRing, type KeyRing } from '../core/secrets';
import { ensureLocalEncryptionKey, readLocalEncryptionKey } from './local-encryption-key';

/**
 * The one place that reads process.env. Everything else receives a Config.
 * A missing or bad value throws ConfigError whose message is one line naming the variable.
 */
export interface Config {
  port: number;
  host: string;
  logLevel: string;
  databaseUrl: string;
  temporal: {
    /** Unset: `npm start` runs an embedded dev server on devPort. */
    address: string | undefined;
    namespace: string;
    taskQueue: string;
    devPort: number;
    uiPort: number;
    cliPath: string | undefined;
    apiKey: string | undefined;
    tlsCertPath: string | undefined;
    tlsKeyPath: string | undefined;
  };
  internalApiToken: string | undefined;
  /** Where the internal routes listen (INTERNAL_PORT); unset: on `port` with every other route. */
  internalPort: number | undefined;
  /** Which hops' X-Forwarded-* headers to believe (TRUST_PROXY): Fastify's trustProxy; false believes none. */
  trustProxy: TrustProxy;
  /** The API's public origin for links it hands out (sign-in links); unset: the address it was reached on. */
  publicUrl: string | undefined;
  webhook: {
    allowPrivateTargets: boolean;
    caFile: string | undefined;
    /**
     * 32-byte AES-256-GCM keys, newest first (WEBHOOK_SECRET_ENCRYPTION_KEYS): the newest seals endpoint secrets,
     * every one opens them (core/secrets.ts). Empty: secrets are stored plain, which production refuses. With
     * WEBHOOK_SECRETS_REQUIRE_SEALED the ring is sealed-only: plain and unbound stored values do not open.
     */
    secretEncryptionKeys: KeyRing;
    secretRotationGraceMs: number;
  };
  delivery: {
    /** Delays between attempts: attempts = retryDelaysMs.length + 1. */
    retryDelaysMs: number[];
    timeoutMs: number;
    /** A delivery not answered 2xx within this age of its event is given up as `expired` (DELIVERY_MAX_AGE). */
    maxAgeMs: number;
    failingThreshold: number;
    /** Deliveries a recovery starts per second (RECOVER_RATE_PER_SECOND). */
    recoverRatePerSecond: number;
    /** Redeliveries (resend, recover, test) an account may have pending at once (REDELIVERY_MAX_PENDING). */
    redeliveryMaxPending: number;
    /**
     * Attempts and local activities one worker runs at once, each, and its sticky cache (WORKER_CONCURRENCY);
     * worker/worker.ts says why it is far above the SDK's defaults.
     */
    workerConcurrency: number;
    /** Workflow tasks one worker runs at once (WORKER_WORKFLOW_TASKS, WORKER_CONCURRENCY unless set lower); worker/worker.ts. */
    workerWorkflowTasks: number;
  };
  retention: {
    /** Events, their attempts and deliveries, and notifications older than this are deleted (EVENT_RETENTION). */
    eventRetentionMs: number;
  };
  smtpUrl: string | undefined;
  notificationFrom: string;
  rateLimitPerMinute: number;
  dataDir: string;
  metrics: {
    /** Prometheus page of every service process; 0 disables it. */
    port: number;
    host: string;
    /**
     * Further ports tried one after another when `port` is taken: METRICS_PORT unset, so several processes on
     * one host each get a page (9464, 9465, ...); 0 when METRICS_PORT names the port.
     */
    nextPortsToTry?: number;
  };
  /** OpenTelemetry trace export (infra/tracing.ts); undefined: no SDK starts and nothing is exported. */
  tracing: TracingConfig | undefined;
}

/** The OTel SDK samplers OTEL_TRACES_SAMPLER names. */
const TRACE_SAMPLERS = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;
type TraceSampler = (typeof TRACE_SAMPLERS)[number];

/**
 * What decides whether and where spans go, read from the standard OTEL_* variables here and validated at start.
 * The SDK's other standard variables (OTEL_EXPORTER_OTLP_HEADERS, OTEL_EXPORTER_OTLP_TIMEOUT, OTEL_BSP_*,
 * OTEL_RESOURCE_ATTRIBUTES, span limits) are applied by the OpenTelemetry SDK itself, as its specification says,
 * once this config has started it.
 */
export interface TracingConfig {
  /** The OTLP/HTTP traces URL: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as given, or OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces. */
  tracesUrl: string;
  /** OTEL_EXPORTER_OTLP_TRACES_PROTOCOL or OTEL_EXPORTER_OTLP_PROTOCOL; `http/protobuf` by default. */
  protocol: 'http/json' | 'http/protobuf';
  /** OTEL_SERVICE_NAME; unset, each process names itself (parcel-webhooks-api, parcel-webhooks-worker). */
  serviceName: string | undefined;
  /** OTEL_TRACES_SAMPLER (default parentbased_always_on) and its OTEL_TRACES_SAMPLER_ARG ratio (default 1). */
  sampler: TraceSampler;
  samplerRatio: number;
}

/**
 * `true` trusts every hop, a number that many hops nearest the API, a list those addresses and CIDR ranges. The
 * first two believe any client that reaches the API directly: for an API behind its proxies only.
 */
export type TrustProxy = boolean | number | string[];

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    problem: string,
  ) {
    super(`config: ${variable} ${problem}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

function optional(env: Env, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = optional(env, name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(name, `must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
  return value;
}

function boolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = optional(env, name)?.toLowerCase();
  if (raw === undefined) return fallback;
  if (['1', 'true', 'yes', 'on'].includes(raw)) return true;
  if (['0', 'false', 'no', 'off'].includes(raw)) return false;
  throw new ConfigError(name, `must be true or false, got "${raw}"`);
}

function duration(env: Env, name: string, fallback: string, minMs: number, maxMs: number): number {
  const raw = optional(env, name) ?? fallback;
  let ms: number;
  try {
    ms = parseDuration(raw);
  } catch (err) {
    throw new ConfigError(name, (err as Error).message);
  }
  if (ms < minMs || ms > maxMs) {
    throw new ConfigError(name, `must be between ${formatDuration(minMs)} and ${formatDuration(maxMs)}, got ${raw}`);
  }
  return ms;
}

function url(env: Env, name: string, fallback: string | undefined, protocols: string[]): string | undefined {
  const raw = optional(env, name) ?? fallback;
  if (raw === undefined) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(name, 'is not a valid URL');
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(name, `must use ${protocols.join(' or ')}, got ${parsed.protocol}`);
  }
  return raw;
}

/** An origin only (`https://hooks.example`): links are built on it, so a path or query would be lost. */
function publicOrigin(env: Env, name: string): string | undefined {
  const raw = url(env, name, undefined, ['http:', 'https:']);
  if (raw === undefined) return undefined;
  const parsed = new URL(raw);
  if (parsed.username || parsed.password || parsed.search || parsed.hash || parsed.pathname !== '/') {
    throw new ConfigError(name, `must be an origin only, such as https://hooks.example.com, got ${raw}`);
  }
  return parsed.origin;
}

function readableFile(env: Env, name: string): string | undefined {
  const path = optional(env, name);
  if (path !== undefined && !existsSync(path)) throw new ConfigError(name, `names a file that does not exist: ${path}`);
  return path;
}

function encryptionKey(name: string, raw: string): Buffer {
  const key = parseEncryptionKey(raw);
  if (!key) throw new ConfigError(name, 'must hold 32-byte keys, each as 64 hex characters or base64');
  return key;
}

/**
 * WEBHOOK_SECRET_ENCRYPTION_KEYS (comma list, newest first), then WEBHOOK_SECRET_ENCRYPTION_KEY as the oldest
 * (alone, a one-key ring). With NODE_ENV=production a ring is required: secrets are never stored plain there.
 */
function encryptionKeyRing(env: Env): Buffer[] {
  const listed = (optional(env, 'WEBHOOK_SECRET_ENCRYPTION_KEYS') ?? '').split(',').map((raw) => raw.trim());
  if (listed.length > 1 && listed.some((raw) => raw === '')) {
    throw new ConfigError(
      'WEBHOOK_SECRET_ENCRYPTION_KEYS',
      'has an empty entry; list keys newest first, separated by commas',
    );
  }
  const ring = listed.filter((raw) => raw !== '').map((raw) => encryptionKey('WEBHOOK_SECRET_ENCRYPTION_KEYS', raw));
  if (new Set(ring.map((key) => key.toString('hex'))).size !== ring.length) {
    throw new ConfigError('WEBHOOK_SECRET_ENCRYPTION_KEYS', 'lists the same key twice');
  }
  const single = optional(env, 'WEBHOOK_SECRET_ENCRYPTION_KEY');
  if (single !== undefined) {
    const key = encryptionKey('WEBHOOK_SECRET_ENCRYPTION_KEY', single);
    if (!ring.some((held) => held.equals(key))) ring.push(key);
  }
  if (ring.length === 0 && optional(env, 'NODE_ENV') === 'production') {
    throw new ConfigError(
      'WEBHOOK_SECRET_ENCRYPTION_KEYS',
      'must be set when NODE_ENV=production (endpoint secrets are encrypted at rest): generate a key with `openssl rand -hex 32`',
    );
  }
  return ring;
}

function retryLadder(env: Env, name: string): number[] {
  const raw = optional(env, name) ?? '10s,1m,10m,1h,6h';
  let delays: number[];
  try {
    delays = parseDurationList(raw);
  } catch (err) {
    throw new ConfigError(name, (err as Error).message);
  }
  if (delays.length > 20) throw new ConfigError(name, 'may list at most 20 delays');
  if (delays.some((ms) => ms < 1 || ms > 7 * 86_400_000)) {
    throw new ConfigError(name, 'delays must be between 1ms and 7d');
  }
  return delays;
}

/** Words that mark a value copied from an example rather than generated. */
const PLACEHOLDER_WORDS = ['changeme', 'change-me', 'change_me', 'example', 'placeholder', 'replace'];

/** Characters a run of one short block may cover before a token counts as patterned. */
const PATTERN_RUN = 16;
/** Longest block a run is checked for. */
const PATTERN_BLOCK = 8;

/**
 * The block a token repeats: the whole value one block over and over (an 8-character block four times), or a
 * run of PATTERN_RUN characters repeating a block of up to PATTERN_BLOCK. A random token of 32+ characters does
 * either with a chance below one in 2^32.
 */
export function repeatedBlock(raw: string): string | undefined {
  for (let size = 1; size <= raw.length / 2; size += 1) {
    let whole = true;
    for (let i = size; i < raw.length && whole; i += 1) whole = raw[i] === raw[i - size];
    if (whole) return raw.slice(0, size);
  }
  for (let size = 1; size <= PATTERN_BLOCK; size += 1) {
    let run = 0;
    for (let i = size; i < raw.length; i += 1) {
      run = raw[i] === raw[i - size] ? run + 1 : 0;
      if (run + size >= PATTERN_RUN) return raw.slice(i - run - size + 1, i - run + 1);
    }
  }
  return undefined;
}

/**
 * A token nobody could guess from our own files: at least 32 characters, at least 8 distinct ones, no block
 * repeated (repeatedBlock), and none of the words that mark a value copied from an example.
 */
function internalToken(env: Env, name: string): string | undefined {
  const raw = optional(env, name);
  if (raw === undefined) return undefined;
  const hint = 'must be a random string of 32+ characters, e.g. from `openssl rand -hex 32`';
  if (raw.length < 32) throw new ConfigError(name, `${hint}; got ${raw.length} characters`);
  if (new Set(raw).size < 8) throw new ConfigError(name, `${hint}; got a value of fewer than 8 distinct characters`);
  if (repeatedBlock(raw) !== undefined)
    throw new ConfigError(name, `${hint}; got a patterned value (a block of characters repeated)`);
  const word = PLACEHOLDER_WORDS.find((w) => raw.toLowerCase().includes(w));
  if (word) throw new ConfigError(name, `${hint}; got a placeholder (it contains "${word}")`);
  return raw;
}

/** What Fastify's trustProxy takes that is safe to read from the environment. */
function trustProxy(env: Env, name: string): TrustProxy {
  const raw = optional(env, name);
  if (raw === undefined) return false;
  const lower = raw.toLowerCase();
  if (['0', 'false', 'no', 'off'].includes(lower)) return false;
  if (['true', 'yes', 'on'].includes(lower)) return true;
  if (/^\d+$/.test(raw)) return Number(raw);
  const list = raw.split(',').map((item) => item.trim());
  const valid = (item: string) => {
    const [address, prefix, ...rest] = item.split('/');
    const version = isIP(address ?? '');
    if (version === 0 || rest.length > 0) return false;
    return prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (version === 4 ? 32 : 128));
  };
  const bad = list.find((item) => !valid(item));
  if (bad !== undefined) {
    throw new ConfigError(name, `must be true, a hop count or a comma list of addresses and CIDR ranges, got "${bad}"`);
  }
  return list;
}

function otlpProtocol(env: Env): TracingConfig['protocol'] {
  const name =
    optional(env, 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL') !== undefined
      ? 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL'
      : 'OTEL_EXPORTER_OTLP_PROTOCOL';
  const raw = optional(env, name) ?? 'http/protobuf';
  if (raw === 'http/json' || raw === 'http/protobuf') return raw;
  throw new ConfigError(name, `must be http/protobuf or http/json (OTLP over HTTP), got "${raw}"`);
}

/**
 * Tracing is on when a traces endpoint is set and OTEL_SDK_DISABLED is not true; the traces-specific endpoint is
 * used as given, the general one gets /v1/traces appended, as the OTLP exporter specification says.
 */
function tracing(env: Env): TracingConfig | undefined {
  if (boolean(env, 'OTEL_SDK_DISABLED', false)) return undefined;
  const specific = url(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', undefined, ['http:', 'https:']);
  const general = url(env, 'OTEL_EXPORTER_OTLP_ENDPOINT', undefined, ['http:', 'https:']);
  const tracesUrl = specific ?? (general === undefined ? undefined : `${general.replace(/\/+$/, '')}/v1/traces`);
  if (tracesUrl === undefined) return undefined;
  const sampler = (optional(env, 'OTEL_TRACES_SAMPLER') ?? 'parentbased_always_on').toLowerCase();
  if (!(TRACE_SAMPLERS as readonly string[]).includes(sampler)) {
    throw new ConfigError('OTEL_TRACES_SAMPLER', `must be one of ${TRACE_SAMPLERS.join(', ')}, got "${sampler}"`);
  }
  const ratioRaw = optional(env, 'OTEL_TRACES_SAMPLER_ARG');
  const ratio = ratioRaw === undefined ? 1 : Number(ratioRaw);
  if (ratioRaw !== undefined && (!/^\d*\.?\d+$/.test(ratioRaw) || ratio > 1)) {
    throw new ConfigError('OTEL_TRACES_SAMPLER_ARG', `must be a ratio between 0 and 1, got "${ratioRaw}"`);
  }
  return {
    tracesUrl,
    protocol: otlpProtocol(env),
    serviceName: optional(env, 'OTEL_SERVICE_NAME'),
    sampler: sampler as TraceSampler,
    samplerRatio: ratio,
  };
}

/**
 * Settings that hold a secret. Each may instead name a file holding it, `<NAME>_FILE` (Docker and Kubernetes
 * secrets): the file's content, surrounding whitespace trimmed, is the value. Setting both is an error.
 */
export const SECRET_SETTINGS = [
  'DATABASE_URL',
  'INTERNAL_API_TOKEN',
  'SMTP_URL',
  'TEMPORAL_API_KEY',
  'WEBHOOK_SECRET_ENCRYPTION_KEY',
  'WEBHOOK_SECRET_ENCRYPTION_KEYS',
] as const;

function withSecretFiles(env: Env): Env {
  const resolved = { ...env };
  for (const name of SECRET_SETTINGS) {
    const file = optional(env, `${name}_FILE`);
    if (file === undefined) continue;
    if (optional(env, name) !== undefined)
      throw new ConfigError(`${name}_FILE`, `and ${name} are both set: set one of them`);
    let content: string;
    try {
      content = readFileSync(file, 'utf8');
    } catch (err) {
      throw new ConfigError(
        `${name}_FILE`,
        `names a file that cannot be read: ${file} (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
      );
    }
    // An empty file is an unset setting, as an empty variable is: an optional secret (SMTP_URL) can be mounted empty.
    resolved[name] = content.trim();
  }
  return resolved;
}

/**
 * WEBHOOK_SECRETS_REQUIRE_SEALED=true: every stored secret must be sealed and bound to its endpoint (run
 * `secrets reencrypt` first); the ring then opens nothing else, and service processes check at start.
 */
function keyRing(env: Env): KeyRing {
  const ring = encryptionKeyRing(env);
  if (!boolean(env, 'WEBHOOK_SECRETS_REQUIRE_SEALED', false)) return ring;
  if (ring.length === 0) {
    throw new ConfigError(
      'WEBHOOK_SECRETS_REQUIRE_SEALED',
      'needs WEBHOOK_SECRET_ENCRYPTION_KEYS: nothing can be sealed without a key',
    );
  }
  return sealedOnlyRing(ring);
}

/** In production links and session cookies are built on PUBLIC_URL, and only https keeps them private. */
function requireHttpsInProduction(env: Env, publicUrl: string | undefined): void {
  if (optional(env, 'NODE_ENV') !== 'production' || publicUrl?.startsWith('https://')) return;
  throw new ConfigError(
    'PUBLIC_URL',
    `must be an https origin when NODE_ENV=production, such as https://hooks.example.com; got ${publicUrl ?? 'nothing'}`,
  );
}

/** METRICS_PORT when set; unset, 9464 or, when taken, one of the next nine (infra/metrics-server.ts). */
function metricsSettings(env: Env): Config['metrics'] {
  const explicit = optional(env, 'METRICS_PORT') !== undefined;
  return {
    port: integer(env, 'METRICS_PORT', 9464, 0, 65535),
    // Loopback by default: the page names routes and error kinds, not for the open internet.
    host: optional(env, 'METRICS_HOST') ?? '127.0.0.1',
    nextPortsToTry: explicit ? 0 : 9,
  };
}

function databaseUrl(env: Env): string {
  return url(env, 'DATABASE_URL', 'postgres://postgres@127.0.0.1:5432/parcel_webhooks', [
    'postgres:',
    'postgresql:',
  ]) as string;
}

/** DATABASE_URL alone, for `migrate`: a job that needs no other setting is given no other secret. */
export function loadDatabaseUrl(given: Env = process.env): string {
  return databaseUrl(withSecretFiles(given));
}

export function loadConfig(given: Env = process.env): Config {
  const env = withSecretFiles(given);
  const config = configFrom(env);
  requireHttpsInProduction(env, config.publicUrl);
  return config;
}

function configFrom(env: Env): Config {
  const internalApiToken = internalToken(env, 'INTERNAL_API_TOKEN');
  const tlsCertPath = readableFile(env, 'TEMPORAL_TLS_CERT');
  const tlsKeyPath = readableFile(env, 'TEMPORAL_TLS_KEY');
  if ((tlsCertPath === undefined) !== (tlsKeyPath === undefined)) {
    throw new ConfigError(tlsCertPath ? 'TEMPORAL_TLS_KEY' : 'TEMPORAL_TLS_CERT', 'must be set together with its pair');
  }
  const port = integer(env, 'PORT', 3000, 0, 65535);
  const workerConcurrency = integer(env, 'WORKER_CONCURRENCY', 400, 2, 10_000);
  const internalPort =
    optional(env, 'INTERNAL_PORT') === undefined ? undefined : integer(env, 'INTERNAL_PORT', 0, 0, 65535);
  if (internalPort !== undefined && internalPort !== 0 && internalPort === port) {
    throw new ConfigError(
      'INTERNAL_PORT',
      `must differ from PORT (${port}); leave it unset to serve the internal routes on PORT`,
    );
  }
  return {
    port,
    host: optional(env, 'HOST') ?? '0.0.0.0',
    logLevel: optional(env, 'LOG_LEVEL') ?? 'info',
    databaseUrl: databaseUrl(env),
    temporal: {
      address: optional(env, 'TEMPORAL_ADDRESS'),
      namespace: optional(env, 'TEMPORAL_NAMESPACE') ?? 'default',
      taskQueue: optional(env, 'TEMPORAL_TASK_QUEUE') ?? 'parcel-webhooks',
      devPort: integer(env, 'TEMPORAL_DEV_PORT', 7233, 1, 65535),
      uiPort: integer(env, 'TEMPORAL_UI_PORT', 8233, 1, 65535),
      cliPath: readableFile(env, 'TEMPORAL_CLI'),
      apiKey: optional(env, 'TEMPORAL_API_KEY'),
      tlsCertPath,
      tlsKeyPath,
    },
    internalApiToken,
    internalPort,
    trustProxy: trustProxy(env, 'TRUST_PROXY'),
    publicUrl: publicOrigin(env, 'PUBLIC_URL'),
    webhook: {
      allowPrivateTargets: boolean(env, 'WEBHOOK_ALLOW_PRIVATE_TARGETS', false),
      caFile: readableFile(env, 'WEBHOOK_CA_FILE'),
      secretEncryptionKeys: keyRing(env),
      secretRotationGraceMs: duration(env, 'WEBHOOK_SECRET_ROTATION_GRACE', '24h', 0, 7 * 86_400_000),
    },
    delivery: {
      retryDelaysMs: retryLadder(env, 'DELIVERY_RETRY_DELAYS'),
      timeoutMs: duration(env, 'DELIVERY_TIMEOUT', '10s', 100, 60_000),
      maxAgeMs: duration(env, 'DELIVERY_MAX_AGE', '3d', 1_000, 365 * 86_400_000),
      failingThreshold: integer(env, 'ENDPOINT_FAILING_THRESHOLD', 3, 1, 1000),
      // 10/s: a receiver that just came back gets a steady 600 requests a minute rather than its whole backlog
      // at once, 10,000 missed events take about 17 minutes, and on the 2-core reference machine (about 37
      // deliveries/s in all) live traffic keeps most of the engine.
      recoverRatePerSecond: integer(env, 'RECOVER_RATE_PER_SECOND', 10, 1, 1000),
      redeliveryMaxPending: integer(env, 'REDELIVERY_MAX_PENDING', 1000, 1, 1_000_000),
      workerConcurrency,
      workerWorkflowTasks: integer(env, 'WORKER_WORKFLOW_TASKS', workerConcurrency, 2, workerConcurrency),
    },
    retention: {
      eventRetentionMs: duration(env, 'EVENT_RETENTION', '30d', 60_000, 3650 * 86_400_000),
    },
    smtpUrl: url(env, 'SMTP_URL', undefined, ['smtp:', 'smtps:']),
    notificationFrom: optional(env, 'NOTIFICATION_FROM') ?? 'Parcel Webhooks <no-reply@parcel-webhooks.invalid>',
    rateLimitPerMinute: integer(env, 'API_RATE_LIMIT_PER_MINUTE', 600, 1, 1_000_000),
    dataDir: optional(env, 'PARCEL_DATA_DIR') ?? '.data',
    metrics: metricsSettings(env),
    tracing: tracing(env),
  };
}

/**
 * Without a configured key ring, the local key `npm start` keeps under PARCEL_DATA_DIR (infra/local-encryption-key.ts),
 * so every process of a development checkout seals and opens secrets alike. `create` makes that key when there is
 * none (`start` only). Production never gets here without a ring (loadConfig refuses it).
 */
export function withLocalEncryptionKey(config: Config, options: { create?: boolean } = {}): Config {
  if (config.webhook.secretEncryptionKeys.length > 0) return config;
  let key: Buffer | undefined;
  try {
    key = options.create ? ensureLocalEncryptionKey(config.dataDir) : readLocalEncryptionKey(config.dataDir);
  } catch (err) {
    throw new ConfigError('PARCEL_DATA_DIR', `holds no usable local encryption key: ${(err as Error).message}`);
  }
  return key ? { ...config, webhook: { ...config.webhook, secretEncryptionKeys: [key] } } : config;
}

/** For entry points: print the one line and exit instead of a stack trace. */
export function loadConfigOrExit(env: Env = process.env): Config {
  try {
    return withLocalEncryptionKey(loadConfig(env));
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(78); // EX_CONFIG
    }
    throw err;
  }
}

/**
 * Settings a production deployment must not keep by accident, said loudly by every service process at start
 * (api, worker, `start`). `listen` needs none of them.
 */
export function unsafeSettingWarnings(config: Config): string[] {
  const plainSecrets =
    config.webhook.secretEncryptionKeys.length === 0
      ? ['WARNING: WEBHOOK_SECRET_ENCRYPTION_KEYS is not set: endpoint signing secrets are stored in plain text.']
      : [];
  if (!config.webhook.allowPrivateTargets) return plainSecrets;
  return [
    ...plainSecrets,
    '!'.repeat(100),
    '!! WARNING: WEBHOOK_ALLOW_PRIVATE_TARGETS=true: webhook endpoints may target loopback, private and link-local',
    '!! addresses (this machine, your network, cloud metadata services). For tests and private networks only; never',
    '!! in production. Local development does not need it: `parcel-webhooks listen` works without it.',
    '!'.repeat(100),
  ];
}
