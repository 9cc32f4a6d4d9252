import type { Command } from 'commander';
import { parseMode } from '../../core/mode';
import { ALL_SCOPES, parseScopes } from '../../core/scopes';
import {
  createApiKey,
  listApiKeys,
  parseExpiry,
  revokeApiKeyAsOperator,
  type ApiKeyRecord,
} from '../../domain/api-keys';
import { CLI_ACTOR } from '../../domain/audit-log';
import { print, type CliContext } from '../context';

function state(key: ApiKeyRecord, now = Date.now()): string {
  if (key.revoked) return 'revoked';
  if (key.expires_at && Date.parse(key.expires_at) <= now) return 'expired';
  return 'usable';
}

function line(key: ApiKeyRecord): string {
  return [
    key.id,
    key.redacted,
    state(key).padEnd(7),
    `scopes=${key.scopes.join(',')}`,
    `expires=${key.expires_at ?? 'never'}`,
    `last_used=${key.last_used_at ?? 'never'}`,
    key.description ? `"${key.description}"` : '',
  ]
    .filter(Boolean)
    .join('  ');
}

export function registerKeys(program: Command, ctx: CliContext): void {
  const keys = program
    .command('keys')
    .description('API keys of an account: create (shown once), list, revoke')
    .addHelpText(
      'after',
      '\nKeys are stored as SHA-256 hashes with their last four characters: a lost key cannot be shown again;\n' +
        'create a replacement, deploy it, check its last_used_at moves (keys list), then revoke the old one.',
    );

  keys
    .command('create')
    .description(
      'Create a key and print it once (field "key"); test keys work at once, live keys once the account is approved',
    )
    .requiredOption('--account <account-id>', 'owning account, acct_...')
    .requiredOption('--mode <mode>', 'test (svc_test_...) or live (svc_live_...)')
    .requiredOption('--scopes <scopes>', `comma-separated, or all: ${ALL_SCOPES.join(', ')}`)
    .option('--expires <iso>', 'expiry, ISO 8601 date or date-time (UTC unless an offset is given); default never')
    .option('--description <text>', 'what the key is for, e.g. "checkout server"')
    .option('--json', 'print one JSON document')
    .addHelpText(
      'after',
      '\nExample:\n  $ parcel-webhooks keys create --account acct_... --mode test --scopes network:read,webhooks:manage --json',
    )
    .action(
      async (
        options: { account: string; mode: string; scopes: string; expires?: string; description?: string },
        command: Command,
      ) => {
        const created = await createApiKey(
          ctx.pool,
          {
            accountId: options.account,
            mode: parseMode(options.mode),
            scopes: parseScopes(options.scopes),
            expiresAt: options.expires === undefined ? undefined : parseExpiry(options.expires),
            description: options.description,
          },
          CLI_ACTOR,
        );
        print(command, created, () =>
          [`created ${line(created)}`, '', `  ${created.key}`, '', 'Store this key now: it is not shown again.'].join(
            '\n',
          ),
        );
      },
    );

  keys
    .command('list')
    .description('List the keys of an account (last four characters only, never the key)')
    .requiredOption('--account <account-id>', 'acct_...')
    .option('--json', 'print one JSON document')
    .action(async (options: { account: string }, command: Command) => {
      const data = await listApiKeys(ctx.pool, options.account);
      print(command, { object: 'list', data }, () =>
        data.length ? data.map((key) => line(key)).join('\n') : 'no keys',
      );
    });

  keys
    .command('revoke')
    .description('Revoke a key: its next request fails with revoked_api_key')
    .argument('<key-id>', 'key_... (the id from keys list, not the key itself)')
    .option('--json', 'print one JSON document')
    .action(async (id: string, _options, command: Command) => {
      const key = await revokeApiKeyAsOperator(ctx.pool, id, CLI_ACTOR);
      print(command, key, () => `revoked ${line(key)}`);
    });
}
