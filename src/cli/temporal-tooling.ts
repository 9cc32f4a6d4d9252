import { existsSync } from 'node:fs';
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { CliSearchAttributeType } from '../core/delivery-contract';
import { CliError } from './context';

/**
 * The local Temporal tooling of a source checkout (temporal-tools/ at the root): the dev server `start` runs when no
 * TEMPORAL_ADDRESS is set, and the full server `temporal-server` builds and runs. It is neither compiled into dist
 * nor copied into the image, so the CLI loads it only when one of those two needs it, by a path the compiler does
 * not follow (an import, even of types only, would compile it into dist). The interfaces below are the part the
 * CLI uses; a unit test checks the tooling's modules still satisfy them.
 */

/** The default `temporal-server --shards`, shown in its help without loading the tooling (a unit test checks it). */
export const DEFAULT_SERVER_SHARDS = 4;

export interface TemporalCliModule {
  ensureTemporalCli(options: { cliPath?: string; log?: (msg: string) => void }): Promise<string>;
}

export interface DevServerModule {
  startDevServer(options: {
    cliPath: string;
    port: number;
    uiPort?: number;
    dbFile?: string;
    namespace?: string;
  }): Promise<{
    address: string;
    uiUrl: string | undefined;
    stop(): Promise<void>;
  }>;
}

interface ServerInstall {
  dir: string;
}
interface ServerDatabases {
  temporal: string;
  visibility: string;
}

export interface TemporalServerModule {
  ensureTemporalServer(options: { log?: (msg: string) => void }): Promise<ServerInstall>;
  setupTemporalDatabases(options: {
    databaseUrl: string;
    prefix: string;
    install?: ServerInstall;
  }): Promise<ServerDatabases>;
  startTemporalServer(options: {
    databaseUrl: string;
    prefix: string;
    install?: ServerInstall;
    port?: number;
    numHistoryShards?: number;
    namespace?: string;
    searchAttributes?: Record<string, CliSearchAttributeType>;
    runDir?: string;
  }): Promise<{
    address: string;
    namespace: string;
    numHistoryShards: number;
    cluster: { persistenceStore: string; visibilityStore: string };
    logFile: string;
    process: ChildProcess;
    stop(): Promise<void>;
  }>;
}

export interface TemporalToolingModules {
  'temporal-cli': TemporalCliModule;
  'dev-server': DevServerModule;
  'temporal-server': TemporalServerModule;
}

/** Where the tooling is, at the root beside src/: present in a checkout, absent in the image. */
export const TEMPORAL_TOOLING_DIR = path.join(__dirname, '..', '..', 'temporal-tools');

/** Why a command loads the tooling, for its one-line error when the tooling is absent. */
export interface ToolingNeed {
  /** What was asked, e.g. "`start` without TEMPORAL_ADDRESS". */
  command: string;
  /** What to do instead in an install without the tooling. */
  otherwise: string;
}

/**
 * Loads one module of the tooling, or fails with one line saying the tooling is absent and what to do instead.
 * Errors from inside a present tooling module pass through as they are.
 */
export function loadTemporalTooling<K extends keyof TemporalToolingModules>(
  name: K,
  need: ToolingNeed,
  dir: string = TEMPORAL_TOOLING_DIR,
): TemporalToolingModules[K] {
  if (!existsSync(dir)) {
    throw new CliError(
      `${need.command} needs the Temporal tooling of a source checkout (temporal-tools/), which this install does not include: ${need.otherwise}`,
    );
  }
  // require, not import(): under tsx's CommonJS hook a dynamic import() bypasses the TypeScript loader.
  return require(path.join(dir, name)) as TemporalToolingModules[K];
}
