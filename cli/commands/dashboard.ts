import type { Command } from 'commander';
import { createSignInLink } from '../../domain/dashboard-sessions';
import type { Config } from '../../infra/config';
import { print, type CliContext } from '../context';

/** Where the API answers: PUBLIC_URL, else its own listening address (a wildcard read as loopback). */
export function apiOrigin(config: Pick<Config, 'publicUrl' | 'host' | 'port'>): string {
  if (config.publicUrl) return config.publicUrl;
  const host = ['0.0.0.0', '::', '[::]', ''].includes(config.host) ? '127.0.0.1' : config.host;
  return `http://${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${config.port}`;
}

export function registerDashboard(program: Command, ctx: CliContext): void {
  program
    .command('dashboard')
    .description("Print a single-use sign-in link to an account's developers page (valid 10 minutes)")
    .requiredOption('--account <account-id>', 'acct_...')
    .option('--json', 'print one JSON document: { url, expires_at }')
    .addHelpText('after', '\nThe link is built on PUBLIC_URL when set, else on the API address (HOST, PORT).')
    .action(async (options: { account: string }, command: Command) => {
      const link = await createSignInLink(ctx.pool, { accountId: options.account, origin: apiOrigin(ctx.config) });
      print(command, link, () =>
        [link.url, '', `Open it within 10 minutes (until ${new Date(link.expires_at * 1000).toISOString()}); it works once.`].join('\n'),
      );
    });
}
