import { Command, CommanderError } from 'commander';
import { ApiError } from '../core/errors';
import { ConfigError } from '../infra/config';
import { isDependencyOutage, OUTAGE_EXIT_CODE } from '../infra/outages';
import { registerAccounts } from './commands/accounts';
import { registerAudit } from './commands/audit';
import { registerDashboard } from './commands/dashboard';
import { registerEvents } from './commands/events';
import { registerKeys } from './commands/keys';
import { registerListen } from './commands/listen';
import { registerMigrate } from './commands/migrate';
import { registerParcels } from './commands/parcels';
import { registerSecrets } from './commands/secrets';
import { registerSimulate } from './commands/simulate';
import { registerStart } from './commands/start';
import { registerTemporalServer } from './commands/temporal-server';
import { registerWebhooks } from './commands/webhooks';
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
  registerWebhooks(program, ctx);
  registerAudit(program, ctx);
  registerParcels(program, ctx);
  registerListen(program, ctx);
  registerSimulate(program, ctx);
  registerDashboard(program, ctx);
  registerMigrate(program, ctx);
  registerSecrets(program, ctx);
  registerStart(program, ctx);
  registerTemporalServer(program, ctx);
  return program;
}

/** The one error document of every command, and its exit code: an outage is told apart so scripts can retry. */
function errorDocument(err: unknown): { doc: { error: { code: string; message: string } }; exitCode: number } {
  const exitCode = err instanceof CliError ? err.exitCode : 1;
  if (err instanceof ApiError) {
    return {
      doc: { error: { code: err.code, message: err.message } },
      exitCode: err.code === 'service_unavailable' ? OUTAGE_EXIT_CODE : exitCode,
    };
  }
  if (err instanceof ConfigError) return { doc: { error: { code: 'config_error', message: err.message } }, exitCode };
  if (isDependencyOutage(err)) {
    const message = `Postgres or Temporal is unavailable; retry shortly (${(err as Error).message})`;
    return { doc: { error: { code: 'service_unavailable', message } }, exitCode: OUTAGE_EXIT_CODE };
  }
  return { doc: { error: { code: 'command_failed', message: (err as Error).message } }, exitCode };
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
      const json = argv.includes('--json');
      const { doc, exitCode: code } = errorDocument(err);
      exitCode = code;
      if (json) process.stdout.write(`${JSON.stringify(doc, null, 2)}\n`);
      else process.stderr.write(`error: ${doc.error.message}\n`);
    }
  } finally {
    await ctx.close().catch(() => undefined);
  }
  process.exitCode = exitCode;
}
