import type { Command } from 'commander';
import { EVENT_TYPES } from '../../core/event-catalog';
import { registerEndpoint, updateEndpoint, type EndpointRecord } from '../../domain/endpoints';
import { recoverEndpoint, sendTestEvent } from '../../domain/redelivery';
import { CliError, print, type CliContext } from '../context';
import { merchantScope } from './events';

function unixSeconds(raw: string, name: string): number {
  if (/^\d+$/.test(raw)) return Number(raw);
  const ms = Date.parse(raw);
  if (Number.isNaN(ms)) throw new CliError(`${name} must be Unix seconds or an ISO date, got "${raw}"`);
  return Math.floor(ms / 1000);
}

function describeEndpoint(endpoint: EndpointRecord): string {
  return `${endpoint.id}  ${endpoint.url}  ${endpoint.status}  ordering ${endpoint.ordering}`;
}

/** `webhooks create|update`: registering and changing an endpoint as the API does (its checks, its errors). */
function registerEndpointCommands(webhooks: Command, ctx: CliContext): void {
  const deps = () => ({ pool: ctx.pool, config: ctx.config });
  webhooks
    .command('create')
    .description('Register a webhook endpoint; its signing secret is printed once')
    .argument('<url>')
    .requiredOption('--account <id>', 'the merchant account (acct_...)')
    .requiredOption('--mode <mode>', 'test or live')
    .option('--events <kinds>', `comma-separated event kinds (default every kind): ${EVENT_TYPES.join(', ')}`)
    .option('--description <text>', 'a label')
    .option('--ordering <ordering>', "none (default) or parcel: a parcel's events one at a time, in sequence order")
    .option('--json', 'print one JSON document')
    .action(async (url: string, options: { account: string; mode: string; events?: string; description?: string; ordering?: string }, command: Command) => {
      const events = options.events?.split(',').map((kind) => kind.trim()).filter(Boolean);
      const created = await registerEndpoint(deps(), merchantScope(options), {
        url,
        events,
        description: options.description,
        ordering: options.ordering,
      });
      print(command, created, () => `${describeEndpoint(created)}\nsecret ${created.secret} (shown once)`);
    });

  webhooks
    .command('update')
    .description('Change a webhook endpoint')
    .argument('<we_id>')
    .requiredOption('--account <id>', 'the merchant account (acct_...)')
    .requiredOption('--mode <mode>', 'test or live')
    .option('--url <url>', 'a new https URL')
    .option('--ordering <ordering>', 'none or parcel')
    .option('--json', 'print one JSON document')
    .action(async (id: string, options: { account: string; mode: string; url?: string; ordering?: string }, command: Command) => {
      const updated = await updateEndpoint(deps(), merchantScope(options), id, { url: options.url, ordering: options.ordering });
      print(command, updated, () => describeEndpoint(updated));
    });
}

/** `webhooks create|update|recover|test`: operators acting for a merchant, through the same functions as the API. */
export function registerWebhooks(program: Command, ctx: CliContext): void {
  const webhooks = program
    .command('webhooks')
    .description("Register or change an endpoint, recover its missed events, send it a test event");
  // Stored only, like a publish: a worker's dispatcher starts the deliveries, so no Temporal connection.
  const deps = () => ({ pool: ctx.pool, config: ctx.config });
  registerEndpointCommands(webhooks, ctx);

  webhooks
    .command('recover')
    .description('Deliver again every event of a window that never reached the endpoint (RECOVER_RATE_PER_SECOND per second)')
    .argument('<we_id>')
    .requiredOption('--account <id>', 'the merchant account (acct_...)')
    .requiredOption('--mode <mode>', 'test or live')
    .requiredOption('--since <time>', 'Unix seconds or ISO date: events created at or after')
    .option('--until <time>', 'Unix seconds or ISO date: events created at or before (default now)')
    .option('--json', 'print one JSON document')
    .action(async (id: string, options: { account: string; mode: string; since: string; until?: string }, command: Command) => {
      const window = {
        since: unixSeconds(options.since, '--since'),
        until: options.until === undefined ? undefined : unixSeconds(options.until, '--until'),
      };
      const recovery = await recoverEndpoint(deps(), merchantScope(options), id, window);
      print(command, recovery, () =>
        recovery.event_count === 0
          ? `nothing to recover for ${id} in that window`
          : `recovering ${recovery.event_count} event(s) -> ${id} (${recovery.id}, ${ctx.config.delivery.recoverRatePerSecond}/s)`,
      );
    });

  webhooks
    .command('test')
    .description('Send the endpoint a synthetic event with sample data')
    .argument('<we_id>')
    .requiredOption('--account <id>', 'the merchant account (acct_...)')
    .requiredOption('--mode <mode>', 'test or live')
    .option('--type <type>', `event kind (default parcel.created): ${EVENT_TYPES.join(', ')}`)
    .option('--json', 'print one JSON document')
    .action(async (id: string, options: { account: string; mode: string; type?: string }, command: Command) => {
      const event = await sendTestEvent(deps(), merchantScope(options), id, { type: options.type });
      print(command, event, () => `sent test ${event.type} ${event.id} -> ${id}`);
    });
}
