import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  databaseNames,
  postgresTarget,
  probeQuery,
  schemaSteps,
  serverArgs,
  serverConfig,
  sqlToolArgs,
  standardPorts,
  toYaml,
  type ServerConfigInput,
  devServerEnv,
  temporalServerEnv,
  TEMPORAL_SERVER_GOGC,
} from '../../../temporal-tools/temporal-server-config';

const ports = {
  frontendGrpc: 7233,
  frontendHttp: 7243,
  frontendMembership: 6933,
  historyGrpc: 7234,
  historyMembership: 6934,
  matchingGrpc: 7235,
  matchingMembership: 6935,
  workerGrpc: 7239,
  workerMembership: 6939,
};

const input: ServerConfigInput = {
  postgres: { host: '127.0.0.1', port: 5432, user: 'postgres', password: '' },
  databases: databaseNames('run1'),
  ports,
  numHistoryShards: 4,
  dynamicConfigFile: '/repo/deploy/temporal/dynamicconfig.yaml',
  logLevel: 'warn',
  maxConns: { default: 5, visibility: 2 },
};

type Store = { sql: Record<string, unknown> };
interface Parsed {
  persistence: {
    defaultStore: string;
    visibilityStore: string;
    numHistoryShards: number;
    datastores: Record<string, Store>;
  };
  services: Record<string, { rpc: Record<string, unknown> }>;
  clusterMetadata: { currentClusterName: string; clusterInformation: Record<string, { rpcAddress: string }> };
  dynamicConfigClient: { filepath: string; pollInterval: string };
  global: { pprof: { port: number }; metrics?: unknown };
}

describe('Temporal server config', () => {
  it('is YAML the server reads as the object we built', () => {
    const config = serverConfig(input);
    expect(parse(toYaml(config))).toEqual(config);
  });

  it('puts both stores on our own PostgreSQL databases, with the shard count asked for', () => {
    const parsed = parse(toYaml(serverConfig(input))) as Parsed;
    const { persistence } = parsed;
    expect(persistence.numHistoryShards).toBe(4);
    const main = persistence.datastores[persistence.defaultStore]?.sql;
    const visibility = persistence.datastores[persistence.visibilityStore]?.sql;
    expect(main).toMatchObject({
      pluginName: 'postgres12',
      databaseName: 'temporal_run1',
      connectAddr: '127.0.0.1:5432',
      user: 'postgres',
      maxConns: 5,
    });
    expect(visibility).toMatchObject({
      pluginName: 'postgres12',
      databaseName: 'temporal_run1_visibility',
      maxConns: 2,
    });
  });

  it('binds the four services to loopback on the given ports and points the cluster at the frontend', () => {
    const parsed = parse(toYaml(serverConfig(input))) as Parsed;
    expect(Object.keys(parsed.services).sort()).toEqual(['frontend', 'history', 'matching', 'worker']);
    for (const service of Object.values(parsed.services)) expect(service.rpc.bindOnIP).toBe('127.0.0.1');
    expect(parsed.services.frontend?.rpc).toMatchObject({ grpcPort: 7233, httpPort: 7243, membershipPort: 6933 });
    expect(parsed.services.history?.rpc).toMatchObject({ grpcPort: 7234, membershipPort: 6934 });
    const cluster = parsed.clusterMetadata;
    expect(cluster.clusterInformation[cluster.currentClusterName]?.rpcAddress).toBe('127.0.0.1:7233');
    expect(parsed.global.pprof.port).toBe(0);
    expect(parsed.global.metrics).toBeUndefined();
  });

  it('reads the committed dynamic config file, at a poll interval the server accepts (5 s or more)', () => {
    const parsed = parse(toYaml(serverConfig(input))) as Parsed;
    expect(parsed.dynamicConfigClient).toEqual({
      filepath: '/repo/deploy/temporal/dynamicconfig.yaml',
      pollInterval: '60s',
    });
  });

  it('writes any string as a string: passwords and paths cannot change the document', () => {
    const tricky = { password: 'a: b\n- c #d', yes: 'yes', n: '007', empty: '', list: ['x', { k: 'v' }], none: {} };
    expect(parse(toYaml(tricky))).toEqual(tricky);
  });
});

describe('arguments', () => {
  it('starts the server with a config dir under its root and no authorizer', () => {
    expect(serverArgs({ rootDir: '/tmp/run', env: 'parcel' })).toEqual([
      '--root',
      '/tmp/run',
      '--config',
      'config',
      '--env',
      'parcel',
      '--allow-no-auth',
      'start',
    ]);
  });

  it('passes the SQL tool its connection before the command, the password only when there is one', () => {
    const postgres = postgresTarget('postgres://postgres@127.0.0.1:5432/parcel_webhooks');
    expect(postgres).toEqual({ host: '127.0.0.1', port: 5432, user: 'postgres', password: '' });
    expect(sqlToolArgs(postgres, 'temporal_x', ['setup-schema', '-v', '0.0'])).toEqual([
      '--plugin',
      'postgres12',
      '--endpoint',
      '127.0.0.1',
      '--port',
      '5432',
      '--user',
      'postgres',
      '--database',
      'temporal_x',
      'setup-schema',
      '-v',
      '0.0',
    ]);
    const withPassword = postgresTarget('postgresql://u%40x:p%2Fw@db.internal:6543/whatever');
    expect(withPassword).toEqual({ host: 'db.internal', port: 6543, user: 'u@x', password: 'p/w' });
    expect(sqlToolArgs(withPassword, 'd', [])).toContain('p/w');
  });

  it('creates, versions then updates each schema from the shipped versioned directory', () => {
    expect(schemaSteps('/cache/schema/postgresql/v12/temporal/versioned')).toEqual({
      create: ['create-database', '--defaultdb', 'postgres'],
      setup: ['setup-schema', '-v', '0.0'],
      update: ['update-schema', '--schema-dir', '/cache/schema/postgresql/v12/temporal/versioned'],
    });
  });

  it('lays ports out as Temporal does around the frontend port, so a restart on it reuses every one', () => {
    expect(standardPorts(7233)).toEqual(ports);
  });

  it('names the databases from a plain prefix only', () => {
    expect(databaseNames('tc_abc123')).toEqual({
      temporal: 'temporal_tc_abc123',
      visibility: 'temporal_tc_abc123_visibility',
    });
    for (const bad of ['', 'Upper', '1abc', 'a-b', 'a;drop', 'x'.repeat(60)])
      expect(() => databaseNames(bad)).toThrow(/prefix/);
  });

  it('probes every search attribute with a value of its type', () => {
    expect(probeQuery({ ParcelAccountId: 'Keyword', ParcelLivemode: 'Bool', ParcelEndpointIds: 'KeywordList' })).toBe(
      'ParcelAccountId = "probe" AND ParcelLivemode = true AND ParcelEndpointIds = "probe"',
    );
  });
});

describe('the server process environment', () => {
  it("sets our GOGC, keeps the rest of the environment, and leaves an operator's own GOGC alone", () => {
    expect(temporalServerEnv({ PATH: '/bin' })).toEqual({ PATH: '/bin', GOGC: TEMPORAL_SERVER_GOGC });
    expect(temporalServerEnv({ PATH: '/bin', GOGC: '50' })).toEqual({ PATH: '/bin', GOGC: '50' });
    expect(temporalServerEnv({ GOGC: '' }).GOGC).toBe(TEMPORAL_SERVER_GOGC);
  });

  it('holds the dev server to half the cores, at least one, with our GOGC, unless GOMAXPROCS is set', () => {
    expect(devServerEnv(2, { PATH: '/bin' })).toEqual({ PATH: '/bin', GOGC: TEMPORAL_SERVER_GOGC, GOMAXPROCS: '1' });
    expect(devServerEnv(1, {}).GOMAXPROCS).toBe('1');
    expect(devServerEnv(8, {}).GOMAXPROCS).toBe('4');
    expect(devServerEnv(7, {}).GOMAXPROCS).toBe('3');
    expect(devServerEnv(2, { GOMAXPROCS: '2' }).GOMAXPROCS).toBe('2');
    expect(temporalServerEnv({}).GOMAXPROCS).toBeUndefined();
  });
});
