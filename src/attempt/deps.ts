import type { Agent } from 'undici';
import type { Pool } from '../db/pool';
import type { Config } from '../infra/config';

/** Where an attempt's warnings go: the activity's logger for a workflow's try, the runtime's for an early try. */
export interface AttemptLog {
  warn(message: string, meta?: Record<string, unknown>): void;
  error(message: string, meta?: Record<string, unknown>): void;
}

/** What every step of an attempt needs. */
export interface AttemptDeps {
  config: Config;
  pool: Pool;
  /** The worker's one pooled HTTP agent (infra/http-client.ts). */
  http: Agent;
  log?: AttemptLog;
}

const SILENT: AttemptLog = { warn: () => undefined, error: () => undefined };

export function logOf(deps: AttemptDeps): AttemptLog {
  return deps.log ?? SILENT;
}
