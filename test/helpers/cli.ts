import { execFile } from 'node:child_process';
import path from 'node:path';
import { testDatabaseUrl } from './database';

const BIN = path.join(__dirname, '..', '..', 'src', 'cli', 'bin.js');

/** Each CLI run compiles the TypeScript sources through tsx: about 2 s idle, several on a loaded 2-core box. */
export const CLI_TEST_TIMEOUT_MS = 240_000;

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout as one JSON document; undefined when it is not one. */
  json: any;
}

/**
 * The real CLI binary (src/cli/bin.js) against this test file's database, bounded in time. `env` is added to the
 * test process's environment (and may replace DATABASE_URL).
 */
export function runCli(args: string[], env: Record<string, string> = {}, timeoutMs = 60_000): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { env: { ...process.env, DATABASE_URL: testDatabaseUrl(), LOG_LEVEL: 'silent', ...env }, timeout: timeoutMs },
      (error, stdout, stderr) => {
        let json: unknown;
        try {
          json = JSON.parse(stdout);
        } catch {
          json = undefined;
        }
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr, json });
      },
    );
  });
}
