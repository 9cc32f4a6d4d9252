import type { Client } from '@temporalio/client';
import type { Command } from 'commander';
import { createPool, type Pool } from '../db/pool';
import { loadConfig, type Config } from '../infra/config';
import { connectClient } from '../infra/temporal';

/**
 * What a command needs, opened on first use and closed once the command ends,
 * so `accounts list` never connects to Temporal and nothing is left open.
 */
export class CliContext {
  private configValue: Config | undefined;
  private poolValue: Pool | undefined;
  private temporalValue: Client | undefined;

  get config(): Config {
    this.configValue ??= loadConfig();
    return this.configValue;
  }

  get pool(): Pool {
    this.poolValue ??= createPool(this.config.databaseUrl, 2);
    return this.poolValue;
  }

  async temporal(): Promise<Client> {
    this.temporalValue ??= await connectClient(this.config);
    return this.temporalValue;
  }

  async close(): Promise<void> {
    await this.poolValue?.end();
    await this.temporalValue?.connection.close();
  }
}

/** Every command takes --json: then it prints exactly one JSON document on stdout. */
export function print(command: Command, value: unknown, human: () => string): void {
  const json = command.optsWithGlobals<{ json?: boolean }>().json;
  process.stdout.write(json ? `${JSON.stringify(value, null, 2)}\n` : `${human()}\n`);
}

export class CliError extends Error {
  constructor(message: string, readonly exitCode = 1) {
    super(message);
  }
}
