import type { Command } from 'commander';
import { prepareDatabase } from '../../db/migrate';
import { print, type CliContext } from '../context';

export function registerMigrate(program: Command, ctx: CliContext): void {
  program
    .command('migrate')
    .description('Create the database when missing and apply pending migrations (DATABASE_URL)')
    .option('--json', 'print one JSON document')
    .action(async (_options, command: Command) => {
      const applied = await prepareDatabase(ctx.databaseUrl);
      print(command, { object: 'migration_run', applied }, () =>
        applied.length ? `applied: ${applied.join(', ')}` : 'database is up to date',
      );
    });
}
