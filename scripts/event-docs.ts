/**
 * Writes docs/events.md, the event catalog for readers of the docs, from the event schemas (core/event-schemas.ts):
 * the same kinds, sentences, schemas and examples as the developers page's "Event types" and the OpenAPI
 * document's `webhooks`. Everything in it is fixed, so running it again reproduces the committed file byte for
 * byte; test/unit/scripts/event-docs.test.ts fails when the committed file is stale.
 *
 *   npx tsx scripts/event-docs.ts
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { TSchema } from 'typebox';
import { CodSettlementSchema, eventCatalog, ParcelSchema } from '../core/event-schemas';

export const EVENT_DOCS_PATH = path.join(__dirname, '..', 'docs', 'events.md');

const json = (value: unknown) => ['```json', JSON.stringify(value, null, 2), '```'].join('\n');

interface PropertySchema {
  type?: string;
  description?: string;
}

/** A table of an object schema's fields: name, JSON type, required or not, and its description. */
function fieldTable(schema: TSchema): string {
  const { properties = {}, required = [] } = schema as { properties?: Record<string, PropertySchema>; required?: string[] };
  const rows = Object.entries(properties).map(
    ([name, property]) => `| \`${name}\` | ${property.type ?? ''} | ${required.includes(name) ? 'yes' : 'no'} | ${property.description ?? ''} |`,
  );
  return ['| Field | Type | Required | Meaning |', '|---|---|---|---|', ...rows].join('\n');
}

export function renderEventDocs(): string {
  const catalog = eventCatalog();
  const sections = catalog.map((entry) =>
    [
      `## \`${entry.type}\``,
      '',
      `${entry.firesWhen} Carries \`${entry.carries}\`.`,
      '',
      json(entry.example),
      '',
      '<details><summary>JSON Schema</summary>',
      '',
      json(entry.schema),
      '',
      '</details>',
    ].join('\n'),
  );
  return `${[
    '# Event types',
    '',
    '<!-- Generated from core/event-schemas.ts by `npx tsx scripts/event-docs.ts`: edit the schemas, then run it. -->',
    '',
    'The service posts each event to every enabled endpoint subscribed to its kind, as a signed JSON body (headers',
    '`Service-Signature`, `Service-Event`, `Service-Delivery`; see [receiver/README.md](../receiver/README.md)). Every body is an envelope',
    '`{ id, object: "event", type, created, livemode, data }`; `data` is what the kind carries. The same schemas',
    'check what is published (a payload of the wrong shape is refused with `400 invalid_event_data`, `param`',
    'naming the field), describe the `webhooks` of the OpenAPI document (`/docs/json`), fill the developers page\'s',
    '"Event types", and match the receiver kit\'s `ParcelEvent` types.',
    '',
    '| Kind | Fires when | Carries |',
    '|---|---|---|',
    ...catalog.map((entry) => `| [\`${entry.type}\`](#${entry.type.replace(/\./g, '')}) | ${entry.firesWhen} | \`${entry.carries}\` |`),
    '',
    'The parcel (`data.parcel`), in every kind but `cod.settled`. Fields not listed may be added; receivers ignore',
    'what they do not know.',
    '',
    fieldTable(ParcelSchema),
    '',
    'The settlement (`data.cod_settlement`), in `cod.settled`.',
    '',
    fieldTable(CodSettlementSchema),
    '',
    ...sections.flatMap((section) => [section, '']),
  ].join('\n').trimEnd()}\n`;
}

if (require.main === module) {
  writeFileSync(EVENT_DOCS_PATH, renderEventDocs());
  process.stdout.write(`wrote ${EVENT_DOCS_PATH}\n`);
}
