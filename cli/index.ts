import { Command, CommanderError } from 'commander';
import { ConfigError } from '../infra/config';
import { ApiError } from '../core/errors';
import { registerAccounts } from './commands/accounts';
import { registerDashboard } from './commands/dashboard';
import { registerEvents } from './commands/events';
import { registerKeys } from './commands/keys';
import { registerMigrate } from './commands/migrate';
import { registerSimulate } from './commands/simulate';
import { registerStart } from './commands/start';
import { registerTemporalServer } from './commands/temporal-server';
import { CliContext, CliError } from './context';

export function buildProgram(ctx: CliContext): Command {
  const program = new Command('parcel-webhooks')
    .description('Operate Parcel Webhooks: accounts, API keys, events, the simulator and the local stack')
    .option('--json', 'print one JSON document instead of text')
    .showHelpAfterError()
    .exitOverride();
  registerAccounts(program, ctx);
  registerKeys(program, ctx);
  registerEvents(program, ctx);
  registerSimulate(program, ctx);
  registerDashboard(program, ctx);
  registerMigrate(program, ctx);
  registerStart(program, ctx);
  registerTemporalServer(program, ctx);
  return program;
}

function errorDocument(err: unknown): { error: { code: string; message: string } } {
  if (err instanceof ApiError) return { error: { code: err.code, message: err.message } };
  if (err instanceof ConfigError) return { error: { code: 'config_error', message: err.message } };
  return { error: { code: 'command_failed', message: (err as Error).message } };
}

export async function main(argv: string[]): Promise<void> {
  // `parcel-webhooks ... | head` closes stdout early: that is the reader's choice, not a failure to report.
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(0);
    throw err;
  });
  const ctx = new CliContext();
  const program = buildProgram(ctx);
  let exitCode = 0;
  try {
    await program.parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      exitCode = err.exitCode;
      // Commander already explained the usage error on stderr; --json callers still get their one document.
      if (exitCode !== 0 && argv.includes('--json')) {
        const message = err.message.replace(/^error: /, '');
        process.stdout.write(`${JSON.stringify({ error: { code: 'usage_error', message } }, null, 2)}
`);
      }
    } else {
      exitCode = err instanceof CliError ? err.exitCode : 1;
      const json = argv.includes('--json');
      const doc = errorDocument(err);
      if (json) process.stdout.write(`${JSON.stringify(doc, null, 2)}\n`);
      else process.stderr.write(`error: ${doc.error.message}\n`);
    }
  } finally {
    await ctx.close().catch(() => undefined);
  }
  process.exitCode = exitCode;
}
