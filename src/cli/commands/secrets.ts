import type { Command } from 'commander';
import { reencryptSecrets, type ReencryptionReport } from '../../domain/secret-reencryption';
import { CliError, print, type CliContext } from '../context';

/**
 * `secrets reencrypt`: every stored endpoint secret and custom header set onto the newest key of
 * WEBHOOK_SECRET_ENCRYPTION_KEYS.
 */

/** Whether the older keys can go, said in words an operator acts on. */
function keyAdvice(report: ReencryptionReport): string[] {
  const lines: string[] = [];
  if (
    report.secrets_reencrypted === 0 &&
    report.headers_reencrypted === 0 &&
    report.endpoints_changed_meanwhile === 0
  ) {
    lines.push(`nothing to re-encrypt: every readable secret and header set is already on key ${report.key_id}`);
  }
  if (report.unused_key_ids.length > 0) {
    lines.push(
      `safe to drop from WEBHOOK_SECRET_ENCRYPTION_KEYS: key(s) ${report.unused_key_ids.join(', ')} (no secret or header set is sealed under them)`,
    );
  }
  for (const [id, count] of Object.entries(report.still_used_key_ids)) {
    lines.push(`keep key ${id}: ${count} endpoint(s) still use it; run again`);
  }
  if (report.endpoints_unsealed_or_unbound > 0) {
    lines.push(
      `${report.endpoints_unsealed_or_unbound} endpoint(s) still hold a plain or unbound secret or header set; keep every key and run again`,
    );
  }
  return lines;
}

function summary(report: ReencryptionReport): string {
  const lines = [
    `key ${report.key_id}: ${report.endpoints_scanned} endpoint(s) scanned in ${report.batches} batch(es)`,
    `  re-encrypted     ${report.endpoints_reencrypted} endpoint(s), ${report.secrets_reencrypted} secret(s), ${report.headers_reencrypted} header set(s)`,
    `  already current  ${report.endpoints_already_current}`,
  ];
  if (report.endpoints_changed_meanwhile > 0) {
    lines.push(`  changed meanwhile (rotated during the run; run again) ${report.endpoints_changed_meanwhile}`);
  }
  if (report.endpoints_unreadable > 0) {
    lines.push(
      `  unreadable (no key of the ring opens them) ${report.endpoints_unreadable}: ${report.unreadable_endpoint_ids.join(', ')}`,
    );
  }
  return [...lines, ...keyAdvice(report)].join('\n');
}

export function registerSecrets(program: Command, ctx: CliContext): void {
  const secrets = program.command('secrets').description('Endpoint signing secrets at rest');
  secrets
    .command('reencrypt')
    .description(
      'Move every endpoint secret (plain ones and rotation-grace ones included) onto the newest key of ' +
        'WEBHOOK_SECRET_ENCRYPTION_KEYS; safe while deliveries run, and resumable: a re-run skips what is done',
    )
    .option('--batch-size <n>', 'rows per transaction', '500')
    .option('--json', 'print one JSON document with the counts')
    .addHelpText(
      'after',
      '\nKey rotation:\n' +
        '  1. WEBHOOK_SECRET_ENCRYPTION_KEYS=<new>,<old> on every API and worker process (restart them)\n' +
        '  2. $ parcel-webhooks secrets reencrypt --json\n' +
        '  3. drop the keys it reports as safe to drop (no secret or header set is sealed under them) from the list\n' +
        '  4. once every secret is sealed, WEBHOOK_SECRETS_REQUIRE_SEALED=true refuses plain and unbound ones',
    )
    .action(async (options: { batchSize: string }, command: Command) => {
      const batchSize = Number(options.batchSize);
      if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 10_000) {
        throw new CliError('--batch-size must be a whole number from 1 to 10000');
      }
      const ring = ctx.config.webhook.secretEncryptionKeys;
      if (ring.length === 0) {
        throw new CliError('no encryption key is configured: set WEBHOOK_SECRET_ENCRYPTION_KEYS (newest first)');
      }
      const report = await reencryptSecrets(ctx.pool, ring, { batchSize });
      // Unreadable secrets are reported, not fatal: every other row is done, and their endpoints' deliveries
      // already end skipped with secret_unavailable until the missing key is listed again or the secret rotated.
      print(command, report, () => summary(report));
    });
}
