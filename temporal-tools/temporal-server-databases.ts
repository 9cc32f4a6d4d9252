import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { installedTemporalServer, type TemporalServerInstall } from './temporal-server-build';
import {
  databaseNames,
  postgresTarget,
  schemaSteps,
  sqlToolArgs,
  type PostgresTarget,
  type TemporalDatabases,
} from './temporal-server-config';

/** The server's two databases, made and versioned by its own schema tool (what docker-compose.yml's temporal-schema job does). */

const SQL_TOOL_TIMEOUT_MS = 2 * 60_000;
const execFileAsync = promisify(execFile);

async function sqlTool(
  install: TemporalServerInstall,
  postgres: PostgresTarget,
  database: string,
  command: string[],
): Promise<void> {
  try {
    await execFileAsync(install.sqlToolPath, sqlToolArgs(postgres, database, command), {
      timeout: SQL_TOOL_TIMEOUT_MS,
      maxBuffer: 16 * 1024 * 1024,
    });
  } catch (err) {
    const output = `${(err as { stdout?: string }).stdout ?? ''}${(err as { stderr?: string }).stderr ?? ''}`;
    throw Object.assign(
      new Error(
        `temporal-sql-tool ${command[0]} on ${database} failed: ${output.trim().split('\n').slice(-3).join(' | ') || (err as Error).message}`,
      ),
      { output },
    );
  }
}

export interface DatabaseOptions {
  /** postgres:// URL of the server to use; only host, port and credentials are read. */
  databaseUrl: string;
  /** Databases are `temporal_<prefix>` and `temporal_<prefix>_visibility`. */
  prefix: string;
  install?: TemporalServerInstall;
}

/** Creates the two databases when missing and brings both schemas to the newest version the module ships. */
export async function setupTemporalDatabases(options: DatabaseOptions): Promise<TemporalDatabases> {
  const install = options.install ?? installedTemporalServer();
  const postgres = postgresTarget(options.databaseUrl);
  const databases = databaseNames(options.prefix);
  for (const kind of ['temporal', 'visibility'] as const) {
    const steps = schemaSteps(install.schemaDirs[kind]);
    try {
      await sqlTool(install, postgres, databases[kind], steps.create);
    } catch (err) {
      if (!/already exists/.test((err as { output?: string }).output ?? '')) throw err;
    }
    await sqlTool(install, postgres, databases[kind], steps.setup);
    await sqlTool(install, postgres, databases[kind], steps.update);
  }
  return databases;
}

/** Drops both databases (the server using them must be stopped first). */
export async function dropTemporalDatabases(options: DatabaseOptions): Promise<void> {
  const install = options.install ?? installedTemporalServer();
  const postgres = postgresTarget(options.databaseUrl);
  const databases = databaseNames(options.prefix);
  for (const database of [databases.temporal, databases.visibility]) {
    await sqlTool(install, postgres, database, ['drop-database', '--defaultdb', 'postgres', '--force']);
  }
}
