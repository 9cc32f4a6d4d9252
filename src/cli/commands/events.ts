import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { EVENT_TYPES } from '../../core/event-catalog';
import { parseMode } from '../../core/mode';
import { getEvent, listEvents, type EventRecord, type EventWithDeliveries } from '../../domain/event-log';
import { publishEvent, type PublishedEvent } from '../../domain/events';
import { resendEvent } from '../../domain/redelivery';
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

/** Operators acting for a merchant: the account and mode every merchant call is scoped to. */
export function merchantScope(options: { account: string; mode: string }): { accountId: string; livemode: boolean } {
  return { accountId: options.account, livemode: parseMode(options.mode) === 'live' };
}

function describeEvent(event: EventRecord): string {
  const when = new Date(event.created * 1000).toISOString();
  return `${event.id}  ${event.type.padEnd(26)} ${when}  pending ${event.pending_webhooks}`;
}

function describeDeliveries(event: EventWithDeliveries): string {
  const lines = [describeEvent(event)];
  for (const d of event.deliveries) {
    const status = d.reason ? `${d.status} (${d.reason})` : d.status;
    lines.push(
      `  ${d.endpoint_id}  ${d.trigger.padEnd(9)} ${status.padEnd(30)} attempts ${d.attempts}, last ${d.last_status_code ?? '-'}`,
    );
  }
  return lines.join('\n');
}

export function registerEvents(program: Command, ctx: CliContext): void {
  const events = program.command('events').description("Publish events, and read and resend an account's events");
  const scoped = (command: Command) =>
    command
      .requiredOption('--account <id>', 'the merchant account (acct_...)')
      .requiredOption('--mode <mode>', 'test or live')
      .option('--json', 'print one JSON document');

  scoped(events.command('list').description('List events, newest first'))
    .option('--limit <n>', 'page size, 1 to 100', '10')
    .option('--type <type>', `only this kind: ${EVENT_TYPES.join(', ')}`)
    .option('--starting-after <evt_id>', 'the page after this event')
    .action(
      async (
        options: { account: string; mode: string; limit: string; type?: string; startingAfter?: string },
        command: Command,
      ) => {
        const limit = Number(options.limit);
        if (!Number.isInteger(limit) || limit < 1 || limit > 100)
          throw new CliError('--limit must be a whole number from 1 to 100');
        const page = await listEvents(ctx.pool, merchantScope(options), {
          limit,
          type: options.type,
          startingAfter: options.startingAfter,
        });
        print(command, { object: 'list', data: page.data, has_more: page.hasMore }, () =>
          page.data.length === 0 ? 'no events' : page.data.map(describeEvent).join('\n'),
        );
      },
    );

  scoped(events.command('get').description('Show an event and every delivery of it').argument('<evt_id>')).action(
    async (id: string, options: { account: string; mode: string }, command: Command) => {
      const event = await getEvent(ctx.pool, merchantScope(options), id);
      print(command, event, () => describeDeliveries(event));
    },
  );

  scoped(
    events
      .command('resend')
      .description('Deliver an event again: same id and bytes, fresh signature')
      .argument('<evt_id>'),
  )
    .option('--endpoint <we_id>', 'one endpoint; default every live endpoint the event was delivered to')
    .action(async (id: string, options: { account: string; mode: string; endpoint?: string }, command: Command) => {
      // Stored only, like a publish: a worker's dispatcher starts the delivery.
      const resent = await resendEvent({ pool: ctx.pool, config: ctx.config }, merchantScope(options), id, {
        endpointId: options.endpoint,
      });
      print(command, resent, () =>
        resent.endpoint_ids.length === 0
          ? `${id}: no live endpoint to resend to`
          : `resending ${id} -> ${resent.endpoint_ids.join(', ')}`,
      );
    });

  events
    .command('publish')
    .description('Publish one event through the same path as the internal API')
    .requiredOption('--account <id>', 'account the event belongs to (acct_...)')
    .requiredOption('--mode <mode>', 'test or live: endpoints of that mode receive it')
    .requiredOption('--type <type>', `event kind: ${EVENT_TYPES.join(', ')}`)
    .option(
      '--data <json>',
      "event data as JSON, or @file, in its kind's shape: data.parcel (whole) for parcel events, data.parcel ({ id, parcel_number }) and data.cod_settlement for cod.settled",
    )
    .option('--id <evt_id>', 'event id (evt_...); publishing the same id twice is one event')
    .option('--json', 'print one JSON document')
    .addHelpText(
      'after',
      `\nExample (the fields each kind needs are in docs/events.md):\n  $ parcel-webhooks events publish --account acct_... --mode test --type parcel.delivered \\\n      --data @parcel.json --json`,
    )
    .action(
      async (
        options: { account: string; mode: string; type: string; data?: string; id?: string },
        command: Command,
      ) => {
        // Stored only: a worker's dispatcher starts the delivery, so this needs no Temporal and no ladder settings.
        const published = await publishEvent(
          { pool: ctx.pool },
          {
            accountId: options.account,
            livemode: parseMode(options.mode) === 'live',
            type: options.type,
            data: parseData(options.data),
            id: options.id,
          },
        );
        print(
          command,
          {
            ...published.event,
            account_id: published.accountId,
            endpoint_ids: published.endpointIds,
            created_now: published.created,
            workflow_id: published.workflowId,
          },
          () => describePublished(published),
        );
      },
    );
}
