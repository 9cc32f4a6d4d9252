import type { Command } from 'commander';
import { parseMode } from '../../core/mode';
import { getAccount } from '../../domain/accounts';
import { seededRandom, simulateParcels, type SimulationSummary } from '../../domain/parcel-simulator';
import { CliError, print, type CliContext } from '../context';

const MAX_PARCELS = 10_000;

function positiveInteger(raw: string, name: string, max: number): number {
  if (!/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > max)
    throw new CliError(`${name} must be a whole number from 1 to ${max}`);
  return Number(raw);
}

function describeSummary(summary: SimulationSummary): string {
  const lines = [
    `simulated ${summary.parcels} parcel(s) for ${summary.account_id} (${summary.livemode ? 'live' : 'test'}): ${summary.events} event(s), ` +
      `${summary.delivered_to_endpoints} sent to at least one endpoint`,
  ];
  for (const [type, count] of Object.entries(summary.by_type)) lines.push(`  ${type.padEnd(26)} ${count}`);
  return lines.join('\n');
}

export function registerSimulate(program: Command, ctx: CliContext): void {
  program
    .command('simulate')
    .description('Drive parcels through their lifecycle, publishing every stage as an event')
    .requiredOption('--account <id>', 'account the parcels belong to (acct_...)')
    .requiredOption('--mode <mode>', 'test or live: endpoints of that mode receive the events')
    .option('--parcels <n>', 'how many parcels', '10')
    .option('--seed <n>', 'repeat a run: same parcels, same paths')
    .option('--json', 'print one JSON document')
    .addHelpText('after', '\nExample:\n  $ parcel-webhooks simulate --account acct_... --mode test --parcels 20')
    .action(async (options: { account: string; mode: string; parcels: string; seed?: string }, command: Command) => {
      const livemode = parseMode(options.mode) === 'live';
      const parcels = positiveInteger(options.parcels, '--parcels', MAX_PARCELS);
      const random =
        options.seed === undefined ? undefined : seededRandom(positiveInteger(options.seed, '--seed', 2 ** 31));
      // A clear error for a mistyped account before anything is published.
      await getAccount(ctx.pool, options.account);
      const summary = await simulateParcels(
        { pool: ctx.pool },
        { accountId: options.account, livemode, parcels, random },
      );
      print(command, summary, () => describeSummary(summary));
    });
}
