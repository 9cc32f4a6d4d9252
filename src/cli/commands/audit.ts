import type { Command } from 'commander';
import { AUDIT_ACTIONS, listAuditLog, type AuditEntryRecord } from '../../domain/audit-log';
import { CliError, print, type CliContext } from '../context';
import { merchantScope } from './events';

function line(entry: AuditEntryRecord): string {
  return [
    new Date(entry.created * 1000).toISOString(),
    entry.action.padEnd(23),
    `${entry.actor.type}${entry.actor.id ? `:${entry.actor.id}` : ''}`,
    `${entry.target.type}:${entry.target.id}`,
    entry.changes ? `changes=${entry.changes.join(',')}` : '',
    entry.id,
  ]
    .filter(Boolean)
    .join('  ');
}

export function registerAudit(program: Command, ctx: CliContext): void {
  program
    .command('audit')
    .description('The audit log: who changed which key or endpoint')
    .command('list')
    .description("List an account's audit log in one mode, newest first")
    .requiredOption('--account <id>', 'the merchant account (acct_...)')
    .requiredOption('--mode <mode>', 'test or live')
    .option('--action <action>', `only this action: ${AUDIT_ACTIONS.join(', ')}`)
    .option('--limit <n>', 'entries, 1 to 100', '20')
    .option('--starting-after <aud_id>', 'the entry after which to start (paging)')
    .option('--json', 'print one JSON document')
    .action(
      async (
        options: { account: string; mode: string; action?: string; limit: string; startingAfter?: string },
        command: Command,
      ) => {
        const limit = Number(options.limit);
        if (!Number.isInteger(limit) || limit < 1 || limit > 100)
          throw new CliError(`--limit must be a whole number from 1 to 100, got "${options.limit}"`);
        const page = await listAuditLog(ctx.pool, merchantScope(options), {
          limit,
          action: options.action,
          startingAfter: options.startingAfter,
        });
        print(command, { object: 'list', data: page.data, has_more: page.hasMore }, () =>
          page.data.length ? page.data.map(line).join('\n') : 'no entries',
        );
      },
    );
}
