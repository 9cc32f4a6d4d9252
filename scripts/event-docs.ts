/**
 * Writes docs/events.md, the event catalog for readers of the docs, from the event schemas (src/core/event-schemas.ts):
 * the same kinds, sentences, schemas and examples as the developers page's "Event types" and the OpenAPI
 * document's `webhooks`; then the operational events (src/core/operational-event-schemas.ts), sent to the parcel
 * system's operational webhooks only. Everything in it is fixed, so running it again reproduces the committed file byte for
 * byte; test/unit/scripts/event-docs.test.ts fails when the committed file is stale.
 *
 *   npx tsx scripts/event-docs.ts
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { TSchema } from 'typebox';
import { CUSTOM_HEADERS_NOTE, deliveryHeaders } from '../src/core/delivery-headers';
import { CodSettlementSchema, eventCatalog, ParcelReferenceSchema, ParcelSchema } from '../src/core/event-schemas';
import {
  exampleOperationalEvent,
  OPERATIONAL_EVENT_FIRES_WHEN,
  OPERATIONAL_EVENT_SCHEMAS,
  OPERATIONAL_EVENT_TYPES,
  OperationalDeliverySchema,
  OperationalEndpointSchema,
} from '../src/core/operational-event-schemas';
import { API_VERSIONS, LATEST_API_VERSION, olderRenderings } from '../src/core/versions';

export const EVENT_DOCS_PATH = path.join(__dirname, '..', 'docs', 'events.md');

const json = (value: unknown) => ['```json', JSON.stringify(value, null, 2), '```'].join('\n');

interface PropertySchema {
  type?: string;
  description?: string;
}

/** A table of an object schema's fields: name, JSON type, required or not, and its description. */
function fieldTable(schema: TSchema): string {
  const { properties = {}, required = [] } = schema as {
    properties?: Record<string, PropertySchema>;
    required?: string[];
  };
  const rows = Object.entries(properties).map(
    ([name, property]) =>
      `| \`${name}\` | ${property.type ?? ''} | ${required.includes(name) ? 'yes' : 'no'} | ${property.description ?? ''} |`,
  );
  return ['| Field | Type | Required | Meaning |', '|---|---|---|---|', ...rows].join('\n');
}

/** The operational kinds: for the parcel system's operational webhooks, never a merchant's endpoint. */
function operationalSections(): string[] {
  return [
    '## Operational events',
    '',
    "These kinds go to the parcel system's operational webhooks only (`POST /internal/v1/operational-webhooks`, see",
    '[operations.md](operations.md)), never to a merchant endpoint, and the publish API refuses them. Each tells of',
    'one merchant endpoint (`data.endpoint`, with its full URL, so the parcel system can contact the merchant);',
    "`account_id` and `livemode` are that endpoint's. They are delivered like every event: the headers above, signed",
    "with the operational endpoint's own secret, on the same retry ladder.",
    '',
    '| Kind | Fires when |',
    '|---|---|',
    ...OPERATIONAL_EVENT_TYPES.map(
      (type) => `| [\`${type}\`](#${type.replace(/\./g, '')}) | ${OPERATIONAL_EVENT_FIRES_WHEN[type]} |`,
    ),
    '',
    'The endpoint (`data.endpoint`), in every operational kind.',
    '',
    fieldTable(OperationalEndpointSchema),
    '',
    'The delivery given up (`data.delivery`), in `delivery.abandoned` and `delivery.expired`.',
    '',
    fieldTable(OperationalDeliverySchema),
    '',
    ...OPERATIONAL_EVENT_TYPES.flatMap((type) => [
      `### \`${type}\``,
      '',
      OPERATIONAL_EVENT_FIRES_WHEN[type],
      '',
      json(exampleOperationalEvent(type)),
      '',
      '<details><summary>JSON Schema</summary>',
      '',
      json(OPERATIONAL_EVENT_SCHEMAS[type]),
      '',
      '</details>',
      '',
    ]),
  ];
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
      ...olderRenderings(entry.type).flatMap((older) => [
        '',
        `In API version \`${older.version}\`: ${older.differences.join(' ')}`,
        '',
        `<details><summary>${older.version}: example and JSON Schema</summary>`,
        '',
        json(older.example),
        '',
        json(older.schema),
        '',
        '</details>',
      ]),
    ].join('\n'),
  );
  return `${[
    '# Event types',
    '',
    '<!-- Generated from src/core/event-schemas.ts and src/core/operational-event-schemas.ts by `npx tsx scripts/event-docs.ts`: edit the schemas, then run it. -->',
    '',
    'The service posts each event to every enabled endpoint subscribed to its kind, as a signed JSON body (the headers',
    'below; see [src/receiver/README.md](../src/receiver/README.md)). Every body is an envelope',
    '`{ id, object: "event", type, created, livemode, data }`; `data` is what the kind carries. The same schemas',
    'check what is published (a payload of the wrong shape is refused with `400 invalid_event_data`, `param`',
    "naming the field), describe the `webhooks` of the OpenAPI document (`/docs/json`), fill the developers page's",
    '"Event types", and match the receiver kit\'s types (`ParcelEvent` for the newest version, one union per version).',
    '',
    '| Kind | Fires when | Carries |',
    '|---|---|---|',
    ...catalog.map(
      (entry) =>
        `| [\`${entry.type}\`](#${entry.type.replace(/\./g, '')}) | ${entry.firesWhen} | \`${entry.carries}\` |`,
    ),
    '',
    '## Headers',
    '',
    `Every POST carries these. ${CUSTOM_HEADERS_NOTE}`,
    '',
    '| Header | Sent | Meaning |',
    '|---|---|---|',
    ...deliveryHeaders().map(
      (header) =>
        `| \`${header.name}\` | ${header.always ? 'always' : 'when its version has a sunset date'} | ${header.description} |`,
    ),
    '',
    `## API versions`,
    '',
    `Events are shown here in the newest API version, \`${LATEST_API_VERSION}\`. Each endpoint receives them in the version it is`,
    'pinned to (its `api_version`, sent as the `Service-Version` header); see [versioning.md](versioning.md).',
    '',
    '| Version | What changed |',
    '|---|---|',
    ...API_VERSIONS.map(
      (version) =>
        `| \`${version.name}\`${version.name === LATEST_API_VERSION ? ' (newest)' : ''}${version.sunset ? ` (served until ${version.sunset})` : ''} | ${[
          version.why,
          ...version.changes.map((change) => `\`${change.type}\`: ${change.summary}`),
        ].join(' ')} |`,
    ),
    '',
    'The parcel (`data.parcel`), in every parcel kind. Fields not listed may be added; receivers ignore what they do',
    'not know.',
    '',
    fieldTable(ParcelSchema),
    '',
    'The parcel a settlement is about (`data.parcel`), in `cod.settled`.',
    '',
    fieldTable(ParcelReferenceSchema),
    '',
    'The settlement (`data.cod_settlement`), in `cod.settled`.',
    '',
    fieldTable(CodSettlementSchema),
    '',
    ...sections.flatMap((section) => [section, '']),
    ...operationalSections(),
  ]
    .join('\n')
    .trimEnd()}\n`;
}

if (require.main === module) {
  writeFileSync(EVENT_DOCS_PATH, renderEventDocs());
  process.stdout.write(`wrote ${EVENT_DOCS_PATH}\n`);
}
