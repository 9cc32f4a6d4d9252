import type { Command } from 'commander';
import { createAccount, listAccounts, setAccountStatus, type Account } from '../../domain/accounts';
import { print, type CliContext } from '../context';

function line(account: Account): string {
  return `${account.id}  ${account.status.padEnd(9)}  ${account.name}${account.email ? ` <${account.email}>` : ''}`;
}

export function registerAccounts(program: Command, ctx: CliContext): void {
  const accounts = program
    .command('accounts')
    .description('Merchant accounts: create, approve for live keys, suspend, list')
    .addHelpText(
      'after',
      '\nStates: pending (test keys only), active (approved: live keys work too), suspended (every key refused).',
    );

  accounts
    .command('create')
    .description('Create an account (pending unless --status active)')
    .requiredOption('--name <name>', 'display name of the merchant')
    .option('--email <email>', 'contact address for notifications (endpoint failing, ...)')
    .option('--status <status>', 'pending or active', 'pending')
    .option('--json', 'print one JSON document')
    .addHelpText(
      'after',
      '\nExample:\n  $ parcel-webhooks accounts create --name "Duka Letu" --email ops@duka.example --json',
    )
    .action(async (options: { name: string; email?: string; status: string }, command: Command) => {
      const account = await createAccount(ctx.pool, {
        name: options.name,
        email: options.email,
        status: options.status,
      });
      print(command, account, () => `created ${line(account)}`);
    });

  accounts
    .command('approve')
    .description('Approve an account so its live keys work (also reinstates a suspended account)')
    .argument('<account-id>', 'acct_...')
    .option('--json', 'print one JSON document')
    .action(async (id: string, _options, command: Command) => {
      const account = await setAccountStatus(ctx.pool, id, 'active');
      print(command, account, () => `approved ${line(account)}`);
    });

  accounts
    .command('suspend')
    .description('Suspend an account: every key of it is refused (client_suspended) from the next request on')
    .argument('<account-id>', 'acct_...')
    .option('--json', 'print one JSON document')
    .action(async (id: string, _options, command: Command) => {
      const account = await setAccountStatus(ctx.pool, id, 'suspended');
      print(command, account, () => `suspended ${line(account)}`);
    });

  accounts
    .command('list')
    .description('List accounts, newest first')
    .option('--json', 'print one JSON document')
    .action(async (_options, command: Command) => {
      const data = await listAccounts(ctx.pool);
      print(command, { object: 'list', data }, () => (data.length ? data.map(line).join('\n') : 'no accounts'));
    });
}
