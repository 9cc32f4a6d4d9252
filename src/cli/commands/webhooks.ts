import type { Command } from 'commander';
import { EVENT_TYPES } from '../../core/event-catalog';
import { ENDPOINT_SETTINGS, settingsWith, type CliParse, type CliSpec } from '../../core/endpoint-settings';
import { CLI_ACTOR } from '../../domain/audit-log';
import { registerEndpoint, updateEndpoint, type EndpointRecord, type RegisterInput } from '../../domain/endpoints';
import { pauseEndpoint, resumeEndpoint } from '../../domain/endpoint-lifecycle';
import { recoverEndpoint, sendTestEvent } from '../../domain/redelivery';
import { CliError, print, type CliContext } from '../context';
import { merchantScope } from './events';

function unixSeconds(raw: string, name: string): number {
  if (/^\d+$/.test(raw)) return Number(raw);
  const ms = Date.parse(raw);
  if (Number.isNaN(ms)) throw new CliError(`${name} must be Unix seconds or an ISO date, got "${raw}"`);
  return Math.floor(ms / 1000);
}

/** `--rate-limit`: a whole number, or `none` to remove the limit; anything else is left for the domain to refuse. */
function rateLimitOption(raw: string): number | null {
  if (raw === 'none') return null;
  return /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
}

function eventsOption(raw: string | undefined): string[] | undefined {
  return raw === undefined
    ? undefined
    : raw
        .split(',')
        .map((kind) => kind.trim())
        .filter((kind) => kind !== '');
}

/** `--header "Name: value"` (repeatable): collected in order; `Name:` with nothing after it removes the header. */
function collectHeader(raw: string, previous: string[] = []): string[] {
  return [...previous, raw];
}

/** The headers change the options ask for: name -> value, or null to remove (update only). */
function headersOption(raw: string[] | undefined): Record<string, string | null> | undefined {
  if (raw === undefined) return undefined;
  const change: Record<string, string | null> = {};
  for (const item of raw) {
    const colon = item.indexOf(':');
    if (colon <= 0) throw new CliError(`--header must be "Name: value" (or "Name:" to remove it), got "${item}"`);
    const value = item.slice(colon + 1).trim();
    change[item.slice(0, colon).trim()] = value === '' ? null : value;
  }
  return change;
}

/** The status, with why it is disabled (`disabled (gone)`) or since when it is paused. */
function statusOf(endpoint: EndpointRecord): string {
  if (endpoint.status === 'disabled' && endpoint.disabled_reason !== null)
    return `disabled (${endpoint.disabled_reason})`;
  if (endpoint.status === 'paused' && endpoint.paused_at !== null)
    return `paused since ${new Date(endpoint.paused_at * 1000).toISOString()}`;
  return endpoint.status;
}

function describeEndpoint(endpoint: EndpointRecord): string {
  const limit = endpoint.rate_limit === null ? 'no rate limit' : `rate limit ${endpoint.rate_limit}/s`;
  return `${endpoint.id}  ${statusOf(endpoint)}  ${endpoint.url}  (${limit}, ordering ${endpoint.ordering}, API version ${endpoint.api_version})`;
}

/** Each parse of core/endpoint-settings.ts's CliParse: from the option's text to what the domain takes. */
const PARSERS: Record<CliParse, (raw: never) => unknown> = {
  text: (raw: string) => raw,
  list: eventsOption,
  rateLimit: rateLimitOption,
  headers: headersOption,
};

/** Commander's key of a flag: `--rate-limit <n>` -> rateLimit. */
const optionKey = (flag: string) =>
  (flag.split(' ')[0] as string).replace(/^--/, '').replace(/-([a-z])/g, (_, letter: string) => letter.toUpperCase());

/** One option per setting that declares one, with the help text of `create` or `update`. */
function settingOptions(command: Command, which: 'create' | 'update'): Command {
  for (const name of settingsWith('cli')) {
    const cli: CliSpec = ENDPOINT_SETTINGS[name].cli;
    if (cli.repeatable) command.option(cli.flag, cli[which], collectHeader);
    else command.option(cli.flag, cli[which]);
  }
  return command;
}

/** The settings the options give, parsed, by API field; an option left out is left out. */
function settingsOf(options: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    settingsWith('cli').map((name) => {
      const cli: CliSpec = ENDPOINT_SETTINGS[name].cli;
      const raw = options[optionKey(cli.flag)];
      return [name, raw === undefined ? undefined : (PARSERS[cli.parse] as (raw: unknown) => unknown)(raw)];
    }),
  );
}

type EndpointOptions = { account: string; mode: string } & Record<string, unknown>;

/** `webhooks create|update|pause|resume|recover|test`: operators acting for a merchant, through the same functions as the API. */
export function registerWebhooks(program: Command, ctx: CliContext): void {
  const webhooks = program
    .command('webhooks')
    .description('Register or change an endpoint, recover its missed events, send it a test event');
  // Stored only, like a publish: a worker's dispatcher starts the deliveries, so no Temporal connection.
  const deps = () => ({ pool: ctx.pool, config: ctx.config });

  settingOptions(
    webhooks
      .command('create')
      .description('Register a webhook endpoint; its signing secret is shown once')
      .argument('[url]', 'https URL that receives the events (or --url)')
      .requiredOption('--account <id>', 'the merchant account (acct_...)')
      .requiredOption('--mode <mode>', 'test or live'),
    'create',
  )
    .option('--json', 'print one JSON document')
    .action(async (url: string | undefined, options: EndpointOptions, command: Command) => {
      const settings = settingsOf(options);
      const input = { ...settings, url: url ?? settings.url ?? '' } as RegisterInput;
      const endpoint = await registerEndpoint(deps(), merchantScope(options), input, CLI_ACTOR);
      print(command, endpoint, () => `${describeEndpoint(endpoint)}\nsigning secret (shown once): ${endpoint.secret}`);
    });

  settingOptions(
    webhooks
      .command('update')
      .description('Change a webhook endpoint; options left out stay as they are')
      .argument('<we_id>')
      .requiredOption('--account <id>', 'the merchant account (acct_...)')
      .requiredOption('--mode <mode>', 'test or live'),
    'update',
  )
    .option('--json', 'print one JSON document')
    .action(async (id: string, options: EndpointOptions, command: Command) => {
      const endpoint = await updateEndpoint(deps(), merchantScope(options), id, settingsOf(options), CLI_ACTOR);
      print(command, endpoint, () => describeEndpoint(endpoint));
    });

  webhooks
    .command('recover')
    .description(
      'Deliver again every event of a window that never reached the endpoint (RECOVER_RATE_PER_SECOND per second)',
    )
    .argument('<we_id>')
    .requiredOption('--account <id>', 'the merchant account (acct_...)')
    .requiredOption('--mode <mode>', 'test or live')
    .requiredOption('--since <time>', 'Unix seconds or ISO date: events created at or after')
    .option('--until <time>', 'Unix seconds or ISO date: events created at or before (default now)')
    .option('--json', 'print one JSON document')
    .action(
      async (
        id: string,
        options: { account: string; mode: string; since: string; until?: string },
        command: Command,
      ) => {
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
      },
    );

  for (const [name, change, description] of [
    ['pause', pauseEndpoint, 'Pause the endpoint: new events and retries are held, not attempted, until resumed'],
    ['resume', resumeEndpoint, 'Resume a paused endpoint: what was held is delivered, in order, within its rate limit'],
  ] as const) {
    webhooks
      .command(name)
      .description(description)
      .argument('<we_id>')
      .requiredOption('--account <id>', 'the merchant account (acct_...)')
      .requiredOption('--mode <mode>', 'test or live')
      .option('--json', 'print one JSON document')
      .action(async (id: string, options: { account: string; mode: string }, command: Command) => {
        const endpoint = await change(deps(), merchantScope(options), id, CLI_ACTOR);
        print(command, endpoint, () => describeEndpoint(endpoint));
      });
  }

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
