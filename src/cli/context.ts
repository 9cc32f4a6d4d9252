import type { Command } from 'commander';
import { createPool, type Pool } from '../db/pool';
import { loadConfig, loadDatabaseUrl, withLocalEncryptionKey, type Config } from '../infra/config';

/**
 * What a command needs, opened on first use and closed once the command ends, so nothing is left open. No
 * command needs a Temporal client: what asks for a delivery only stores it, and a worker's dispatcher starts it.
 */
export class CliContext {
  private configValue: Config | undefined;
  private poolValue: Pool | undefined;

  get config(): Config {
    this.configValue ??= withLocalEncryptionKey(loadConfig());
    return this.configValue;
  }

  /** DATABASE_URL without the rest of the config (`migrate`). */
  get databaseUrl(): string {
    return this.configValue?.databaseUrl ?? loadDatabaseUrl();
  }

  get pool(): Pool {
    this.poolValue ??= createPool(this.config.databaseUrl, 2);
    return this.poolValue;
  }

  async close(): Promise<void> {
    await this.poolValue?.end();
  }
}

/** Every command takes --json: then it prints exactly one JSON document on stdout. */
export function print(command: Command, value: unknown, human: () => string): void {
  const json = command.optsWithGlobals<{ json?: boolean }>().json;
  process.stdout.write(json ? `${JSON.stringify(value, null, 2)}\n` : `${human()}\n`);
}

export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}
