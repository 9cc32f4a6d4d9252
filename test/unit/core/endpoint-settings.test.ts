import { Command } from 'commander';
import Fastify, { type RouteOptions } from 'fastify';
import { describe, expect, it } from 'vitest';
import webhookRoutes from '../../../src/api/routes/webhooks';
import { registerWebhooks } from '../../../src/cli/commands/webhooks';
import type { CliContext } from '../../../src/cli/context';
import {
  ENDPOINT_SETTINGS,
  FACT_SETTINGS,
  factLabel,
  FORM_SETTINGS,
  SETTING_NAMES,
  settingColumnsSelected,
  settingsWith,
  type CliSpec,
} from '../../../src/core/endpoint-settings';
import { EVENT_TYPES } from '../../../src/core/event-catalog';
import { endpointInput } from '../../../src/dashboard/routes/endpoints';
import { loadAssets } from '../../../src/dashboard/assets';
import { ALL_ENDPOINT_FEATURES, endpointPage, endpointsPage } from '../../../src/dashboard/views/endpoints';
import { ENDPOINTS, sampleContext } from '../../helpers/dashboard-fixtures';

/**
 * Every endpoint setting is declared once (src/core/endpoint-settings.ts) and every place that lists settings lists
 * exactly the declared ones: the API's bodies and record as the routes serve them, the CLI's options of
 * `webhooks create|update`, the page's form fields and facts, and the columns read. A setting declared shows up
 * in all of them; one added by hand in one place fails here.
 */

const IDENTITY = ['id', 'object', 'livemode', 'created'];
/** The options of `webhooks create|update` that are not settings. */
const COMMAND_OPTIONS = ['--account', '--mode', '--json'];

const sorted = (names: Iterable<string>) => [...names].sort();

/** The routes of /v1/webhooks as Fastify registers them: their schemas are what the API validates and documents. */
async function webhookRouteSchemas(): Promise<RouteOptions[]> {
  const app = Fastify();
  const routes: RouteOptions[] = [];
  app.addHook('onRoute', (route) => void routes.push(route));
  await app.register(webhookRoutes);
  await app.ready();
  await app.close();
  return routes;
}

function routeSchema(routes: RouteOptions[], method: string, url: string) {
  const route = routes.find((candidate) => candidate.method === method && candidate.url === url);
  if (!route?.schema) throw new Error(`no route ${method} ${url}`);
  return route.schema as { body?: { properties: object }; response: Record<number, { properties: object }> };
}

/** The long flags of a CLI command's options that are settings, as commander holds them. */
function cliFlags(command: 'create' | 'update'): string[] {
  const program = new Command();
  registerWebhooks(program, {} as CliContext);
  const webhooks = program.commands.find((candidate) => candidate.name() === 'webhooks');
  const found = webhooks?.commands.find((candidate) => candidate.name() === command);
  if (!found) throw new Error(`no command webhooks ${command}`);
  return found.options.map((option) => option.long ?? '').filter((flag) => !COMMAND_OPTIONS.includes(flag));
}

const flagOf = (spec: CliSpec) => spec.flag.split(' ')[0] as string;

/** The names of the controls of the form posting to `action`, the CSRF token aside. */
function formFieldNames(page: string, action: string): string[] {
  const start = page.indexOf(`action="${action}"`);
  const form = page.slice(start, page.indexOf('</form>', start));
  return [
    ...new Set([...form.matchAll(/<(?:input|textarea|select)\b[^>]*\bname="([^"]+)"/g)].map((m) => m[1]!)),
  ].filter((name) => name !== '_csrf');
}

describe('endpoint settings: declared once, listed everywhere', () => {
  it('the API bodies and the record, as the routes serve them, have exactly the declared settings', async () => {
    const routes = await webhookRouteSchemas();
    const create = routeSchema(routes, 'POST', '/v1/webhooks');
    const update = routeSchema(routes, 'PATCH', '/v1/webhooks/:id');
    const read = routeSchema(routes, 'GET', '/v1/webhooks/:id');
    expect(sorted(Object.keys(create.body?.properties ?? {}))).toEqual(sorted(settingsWith('create')));
    expect(sorted(Object.keys(update.body?.properties ?? {}))).toEqual(sorted(settingsWith('update')));
    expect(sorted(Object.keys(read.response[200]?.properties ?? {}))).toEqual(
      sorted([...IDENTITY, ...settingsWith('record')]),
    );
    // Registration answers the record with the secret, shown once.
    expect(sorted(Object.keys(create.response[200]?.properties ?? {}))).toEqual(
      sorted([...IDENTITY, ...settingsWith('record'), 'secret']),
    );
  });

  it.each(['create', 'update'] as const)('`webhooks %s` has one option per declared CLI setting', (command) => {
    const declared = settingsWith('cli').map((name) => flagOf(ENDPOINT_SETTINGS[name].cli));
    expect(cliFlags(command)).toEqual(declared);
  });

  it('the CLI help shows each option with its declared text', () => {
    const program = new Command();
    registerWebhooks(program, {} as CliContext);
    const webhooks = program.commands.find((candidate) => candidate.name() === 'webhooks');
    for (const command of ['create', 'update'] as const) {
      const found = webhooks?.commands.find((candidate) => candidate.name() === command);
      for (const name of settingsWith('cli')) {
        const spec: CliSpec = ENDPOINT_SETTINGS[name].cli;
        const option = found?.options.find((candidate) => candidate.long === flagOf(spec));
        expect(option?.description, `${command} ${spec.flag}`).toBe(spec[command]);
      }
    }
  });

  it("the page's add and change forms have one field per declared form setting, and its facts one per fact", () => {
    const ctx = sampleContext({ assets: loadAssets().urls });
    const list = endpointsPage(ctx, { endpoints: ENDPOINTS, eventTypes: EVENT_TYPES }).toString();
    expect(sorted(formFieldNames(list, '/dashboard/test/endpoints'))).toEqual(sorted(FORM_SETTINGS));
    const endpoint = ENDPOINTS[0]!;
    const page = endpointPage(ctx, {
      endpoint,
      eventTypes: EVENT_TYPES,
      features: ALL_ENDPOINT_FEATURES,
      notifications: [],
    }).toString();
    expect(sorted(formFieldNames(page, `/dashboard/test/endpoints/${endpoint.id}/update`))).toEqual(
      sorted(FORM_SETTINGS),
    );
    const facts = [...page.matchAll(/<dt>([^<]+)<\/dt>/g)].map((m) => m[1]!);
    expect(facts).toEqual([...FACT_SETTINGS.map(factLabel), 'Created', 'ID']);
  });

  it('a posted form is read into exactly the declared form settings', () => {
    const { values, input } = endpointInput({ url: ' https://shop.example/hooks ', events: ['parcel.created'] });
    expect(sorted(Object.keys(values))).toEqual(sorted(FORM_SETTINGS));
    expect(sorted(Object.keys(input))).toEqual(sorted(FORM_SETTINGS));
    expect(input).toMatchObject({ url: 'https://shop.example/hooks', events: ['parcel.created'], ordering: 'none' });
  });

  it('every read selects each setting once, under its row field', () => {
    const selected = settingColumnsSelected().split(', ');
    expect(selected).toHaveLength(SETTING_NAMES.length);
    expect(selected).toContain('headers AS stored_headers');
    expect(selected).toContain('disabled_at IS NOT NULL AS disabled');
  });
});
