import type { FastifyDynamicSwaggerOptions } from '@fastify/swagger';
import { EVENT_FIRES_WHEN, EVENT_TYPES } from '../core/event-catalog';
import { EVENT_SCHEMAS, exampleEvent } from '../core/event-schemas';
import { API_VERSION_NAMES, LATEST_API_VERSION, olderRenderings } from '../core/versions';

/**
 * The `webhooks` section of the OpenAPI 3.1 document: one entry per event kind, the request the service makes to
 * a merchant's endpoint. Bodies are the event schemas of core/event-schemas.ts, the same ones publishing checks.
 */

/** The `webhooks` field as @fastify/swagger's options declare it (OpenAPI 3.1 and later). */
type Webhooks = NonNullable<Extract<NonNullable<FastifyDynamicSwaggerOptions['openapi']>, { webhooks?: unknown }>['webhooks']>;

const SIGNATURE_HEADERS = (type: string) => [
  {
    name: 'Service-Signature',
    in: 'header',
    required: true,
    description:
      '`t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>" keyed with the endpoint secret>`; two `v1` during a ' +
      'secret rotation. Verify it on the raw bytes and reject a `t` more than 300 s from your clock.',
    schema: { type: 'string', examples: ['t=1767258000,v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd'] },
  },
  { name: 'Service-Event', in: 'header', required: true, description: 'The event kind.', schema: { type: 'string', const: type } },
  {
    name: 'Service-Delivery',
    in: 'header',
    required: true,
    description: 'The attempt id: different on every retry, so deduplicate on the body\'s `id`, never on this.',
    schema: { type: 'string', pattern: '^dlv_' },
  },
  {
    name: 'webhook-id',
    in: 'header',
    required: true,
    description: 'Standard Webhooks: the event id, the same on every attempt (deduplicate on it).',
    schema: { type: 'string', pattern: '^evt_' },
  },
  {
    name: 'webhook-timestamp',
    in: 'header',
    required: true,
    description: 'Standard Webhooks: the Unix seconds of this attempt, the same as `t` in `Service-Signature`.',
    schema: { type: 'string', pattern: '^[0-9]+$' },
  },
  {
    name: 'webhook-signature',
    in: 'header',
    required: true,
    description:
      'Standard Webhooks: `v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<raw body>">` per active secret, ' +
      'space separated (two during a rotation), keyed with the base64 decoding of the secret after `whsec_`: the ' +
      '`standardwebhooks` libraries verify it with the secret unchanged.',
    schema: { type: 'string', pattern: '^v1,[A-Za-z0-9+/=]+( v1,[A-Za-z0-9+/=]+)*$' },
  },
  {
    name: 'traceparent',
    in: 'header',
    required: true,
    description: "W3C Trace Context: the delivery's trace (the publish's trace id), so the receiver's spans can continue it.",
    schema: { type: 'string', pattern: '^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$' },
  },
  {
    name: 'Service-Version',
    in: 'header',
    required: true,
    description: `The API version the body is rendered in: the endpoint's \`api_version\`. The schema below is the newest, ${LATEST_API_VERSION}.`,
    schema: { type: 'string', enum: [...API_VERSION_NAMES] },
  },
  {
    name: 'Deprecation',
    in: 'header',
    required: false,
    description: 'On a version with a successor once its sunset date is set (RFC 9745): `@<Unix seconds>`, when it was deprecated.',
    schema: { type: 'string' },
  },
  {
    name: 'Sunset',
    in: 'header',
    required: false,
    description: 'With Deprecation (RFC 8594): the HTTP date from which the version is no longer served.',
    schema: { type: 'string' },
  },
];

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
            "The endpoint's own custom headers (its `headers`) are sent on every attempt too. " +
            `The body is in the endpoint's API version; the schema is the newest, ${LATEST_API_VERSION}.${olderVersionsNote(type)}`,
          operationId: `webhook_${type.replace(/\./g, '_')}`,
          tags: ['webhooks'],
          parameters: SIGNATURE_HEADERS(type),
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: EVENT_SCHEMAS[type],
                examples: {
                  [type]: { summary: LATEST_API_VERSION, value: exampleEvent(type) },
                  ...Object.fromEntries(olderRenderings(type).map((o) => [`${type} ${o.version}`, { summary: o.version, value: o.example }])),
                },
              },
            },
          },
          responses: {
            '2XX': { description: 'Received. Reply as soon as the event is stored, within 10 seconds; anything else is retried.' },
          },
        },
      },
    ]),
  );
  return entries as unknown as Webhooks;
}
