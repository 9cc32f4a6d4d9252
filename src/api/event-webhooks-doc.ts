import type { FastifyDynamicSwaggerOptions } from '@fastify/swagger';
import { CUSTOM_HEADERS_NOTE, deliveryHeaders } from '../core/delivery-headers';
import { EVENT_FIRES_WHEN, EVENT_TYPES } from '../core/event-catalog';
import { EVENT_SCHEMAS, exampleEvent } from '../core/event-schemas';
import { API_VERSION_NAMES, LATEST_API_VERSION, olderRenderings } from '../core/versions';

/**
 * The `webhooks` section of the OpenAPI 3.1 document: one entry per event kind, the request the service makes to
 * a merchant's endpoint. Bodies are the event schemas of core/event-schemas.ts, the same ones publishing checks.
 */

/** The `webhooks` field as @fastify/swagger's options declare it (OpenAPI 3.1 and later). */
type Webhooks = NonNullable<
  Extract<NonNullable<FastifyDynamicSwaggerOptions['openapi']>, { webhooks?: unknown }>['webhooks']
>;

/** The headers of every POST, as OpenAPI header parameters. */
const deliveryHeaderParameters = (type: string) =>
  deliveryHeaders(type).map((header) => ({
    name: header.name,
    in: 'header',
    required: header.always,
    description: header.description,
    schema: header.schema,
  }));

/** The older versions in which a kind has another shape, and what differs, for its description. */
function olderVersionsNote(type: (typeof EVENT_TYPES)[number]): string {
  const older = olderRenderings(type);
  if (older.length === 0) return ` The same in every API version (${API_VERSION_NAMES.join(', ')}).`;
  return older.map((o) => ` In API version ${o.version}, it differs: ${o.differences.join(' ')}`).join('');
}

/**
 * Typed loosely on purpose: the OpenAPI 3.1 declarations it uses lack JSON Schema 2020-12 keywords such as `const` and
 * `examples`. A test validates the served document as OpenAPI 3.1 instead.
 */
export function eventWebhooks(): Webhooks {
  const entries = Object.fromEntries(
    EVENT_TYPES.map((type) => [
      type,
      {
        post: {
          summary: EVENT_FIRES_WHEN[type],
          description:
            `Posted to every enabled endpoint subscribed to \`${type}\` when this happens: ${EVENT_FIRES_WHEN[type]} ` +
            'Failed attempts are retried after 10 s, 1 min, 10 min, 1 h and 6 h with the same body and event id. ' +
            `${CUSTOM_HEADERS_NOTE} ` +
            `The body is in the endpoint's API version; the schema is the newest, ${LATEST_API_VERSION}.${olderVersionsNote(type)}`,
          operationId: `webhook_${type.replace(/\./g, '_')}`,
          tags: ['webhooks'],
          parameters: deliveryHeaderParameters(type),
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: EVENT_SCHEMAS[type],
                examples: {
                  [type]: { summary: LATEST_API_VERSION, value: exampleEvent(type) },
                  ...Object.fromEntries(
                    olderRenderings(type).map((o) => [
                      `${type} ${o.version}`,
                      { summary: o.version, value: o.example },
                    ]),
                  ),
                },
              },
            },
          },
          responses: {
            '2XX': {
              description:
                'Received. Reply as soon as the event is stored, within 10 seconds; anything else is retried.',
            },
          },
        },
      },
    ]),
  );
  return entries;
}
