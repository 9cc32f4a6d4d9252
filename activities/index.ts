import type { Config } from '../core/config';
import type { Pool } from '../db/pool';

export interface ActivityDeps {
  config: Config;
  pool: Pool;
}

/** Activities come from a factory over their dependencies; the worker builds those, tests may pass their own. */
export function createActivities(deps: ActivityDeps) {
  return {
    async probeDatabase(): Promise<string> {
      const { rows } = await deps.pool.query<{ version: string }>("SELECT current_setting('server_version') AS version");
      return rows[0]?.version ?? 'unknown';
    },
  };
}

export type Activities = ReturnType<typeof createActivities>;
