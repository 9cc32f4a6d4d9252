import type { Command } from 'commander';
import { configuredOrigin, createSignInLink } from '../../domain/dashboard-sessions';
import { print, type CliContext } from '../context';

export function registerDashboard(program: Command, ctx: CliContext): void {
  program
    .command('dashboard')
    .description("Print a single-use sign-in link to an account's developers page (valid 10 minutes)")
    .requiredOption('--account <account-id>', 'acct_...')
    .option('--json', 'print one JSON document: { url, expires_at }')
    .addHelpText('after', '\nThe link is built on PUBLIC_URL when set, else on the API address (HOST, PORT).')
    .action(async (options: { account: string }, command: Command) => {
      const link = await createSignInLink(ctx.pool, {
        accountId: options.account,
        origin: configuredOrigin(ctx.config),
      });
      print(command, link, () =>
        [
          link.url,
          '',
          `Open it within 10 minutes (until ${new Date(link.expires_at * 1000).toISOString()}); it works once.`,
        ].join('\n'),
      );
    });
}
