import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { EVENT_TYPES } from '../../core/event-catalog';
import { parseMode } from '../../core/mode';
import { publishEvent, type PublishedEvent } from '../../domain/events';
import { CliError, print, type CliContext } from '../context';

/** --data takes JSON inline or @path to a file of JSON. */
function parseData(raw: string | undefined): unknown {
  if (raw === undefined) return {};
  const text = raw.startsWith('@') ? readFileSync(raw.slice(1), 'utf8') : raw;
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new CliError(`--data is not valid JSON: ${(err as Error).message}`);
  }
}

function describePublished(published: PublishedEvent): string {
  const { event } = published;
  const fate = published.created ? 'published' : 'already published';
  const to = published.endpointIds.length === 0 ? 'no endpoint subscribed' : `-> ${published.endpointIds.join(', ')}`;
  return `${fate} ${event.id} ${event.type} (${event.livemode ? 'live' : 'test'}) ${to}`;
}

export function registerEvents(program: Command, ctx: CliContext): void {
  const events = program.command('events').description('Publish events to the endpoints of an account');

  events
    .command('publish')
    .description('Publish one event through the same path as the internal API')
    .requiredOption('--account <id>', 'account the event belongs to (acct_...)')
    .requiredOption('--mode <mode>', 'test or live: endpoints of that mode receive it')
    .requiredOption('--type <type>', `event kind: ${EVENT_TYPES.join(', ')}`)
    .option('--data <json>', 'event data as JSON, or @file; parcel events need data.parcel')
    .option('--id <evt_id>', 'event id (evt_...); publishing the same id twice is one event')
    .option('--json', 'print one JSON document')
    .addHelpText(
      'after',
      `\nExample:\n  $ parcel-webhooks events publish --account acct_... --mode test --type parcel.delivered \\\n      --data '{"parcel":{"id":"5f0c...","status":"DELIVERED"}}' --json`,
    )
    .action(async (options: { account: string; mode: string; type: string; data?: string; id?: string }, command: Command) => {
      const published = await publishEvent(
        { pool: ctx.pool, temporal: await ctx.temporal(), config: ctx.config },
        { accountId: options.account, livemode: parseMode(options.mode) === 'live', type: options.type, data: parseData(options.data), id: options.id },
      );
      print(
        command,
        { ...published.event, account_id: published.accountId, endpoint_ids: published.endpointIds, created_now: published.created, workflow_id: published.workflowId },
        () => describePublished(published),
      );
    });
}
