import type { Command } from 'commander';
import { eraseParcel } from '../../domain/parcel-erasure';
import { print, type CliContext } from '../context';

export function registerParcels(program: Command, ctx: CliContext): void {
  const parcels = program.command('parcels').description("A parcel's data as this service keeps it: erase");

  parcels
    .command('erase')
    .description(
      "Erase a parcel's personal values (recipient_name, description) from its stored events, both modes, and from " +
        "its attempts' stored answers",
    )
    .requiredOption('--account <id>', 'the account whose events of the parcel are erased (acct_...)')
    .requiredOption('--parcel <id>', 'the parcel id (data.parcel.id)')
    .option('--json', 'print one JSON document')
    .addHelpText(
      'after',
      "\nRepeating it is harmless. Receivers' own copies are theirs to erase (docs/privacy.md).\n\nExample:\n  $ parcel-webhooks parcels erase --account acct_123 --parcel 5f0c2a8e-4b7d",
    )
    .action(async (options: { account: string; parcel: string }, command: Command) => {
      const erasure = await eraseParcel(ctx.pool, { accountId: options.account, parcelId: options.parcel });
      print(
        command,
        erasure,
        () =>
          `erased parcel ${erasure.parcel_id}: ${erasure.events_erased} event${erasure.events_erased === 1 ? '' : 's'}`,
      );
    });
}
