import { EVENT_TYPES } from './event-catalog';
import { API_VERSION_NAMES, LATEST_API_VERSION } from './versions';

/**
 * The headers of every POST to an endpoint, as the catalogs describe them: the OpenAPI document's `webhooks`,
 * docs/events.md and the developers page's "Event types" all list these, so they cannot drift apart.
 */

export interface DeliveryHeader {
  name: string;
  /** Sent on every POST; false: only in the case its description names. */
  always: boolean;
  description: string;
  /** JSON Schema of the value. */
  schema: Record<string, unknown>;
}

/** What the listed headers are joined by: each endpoint's own. */
export const CUSTOM_HEADERS_NOTE = "The endpoint's own custom headers (its `headers`) are sent on every attempt too.";

/** The headers, in the order a reader meets them; `type` narrows `Service-Event` to one kind. */
export function deliveryHeaders(type?: string): DeliveryHeader[] {
  return [
    {
      name: 'Service-Signature',
      always: true,
      description:
        '`t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>" keyed with the endpoint secret>`; two `v1` during a ' +
        'secret rotation. Verify it on the raw bytes and reject a `t` more than 300 s from your clock.',
      schema: {
        type: 'string',
        examples: ['t=1767258000,v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd'],
      },
    },
    {
      name: 'Service-Event',
      always: true,
      description: 'The event kind.',
      schema: type === undefined ? { type: 'string', enum: [...EVENT_TYPES] } : { type: 'string', const: type },
    },
    {
      name: 'Service-Delivery',
      always: true,
      description: "The attempt id: different on every retry, so deduplicate on the body's `id`, never on this.",
      schema: { type: 'string', pattern: '^dlv_' },
    },
    {
      name: 'webhook-id',
      always: true,
      description: 'Standard Webhooks: the event id, the same on every attempt (deduplicate on it).',
      schema: { type: 'string', pattern: '^evt_' },
    },
    {
      name: 'webhook-timestamp',
      always: true,
      description: 'Standard Webhooks: the Unix seconds of this attempt, the same as `t` in `Service-Signature`.',
      schema: { type: 'string', pattern: '^[0-9]+$' },
    },
    {
      name: 'webhook-signature',
      always: true,
      description:
        'Standard Webhooks: `v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<raw body>">` per active secret, ' +
        'space separated (two during a rotation), keyed with the base64 decoding of the secret after `whsec_`: the ' +
        '`standardwebhooks` libraries verify it with the secret unchanged.',
      schema: { type: 'string', pattern: '^v1,[A-Za-z0-9+/=]+( v1,[A-Za-z0-9+/=]+)*$' },
    },
    {
      name: 'traceparent',
      always: true,
      description:
        "W3C Trace Context: the delivery's trace (the publish's trace id), so the receiver's spans can continue it.",
      schema: { type: 'string', pattern: '^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$' },
    },
    {
      name: 'Service-Version',
      always: true,
      description: `The API version the body is rendered in: the endpoint's \`api_version\`. The schema below is the newest, ${LATEST_API_VERSION}.`,
      schema: { type: 'string', enum: [...API_VERSION_NAMES] },
    },
    {
      name: 'Deprecation',
      always: false,
      description:
        'On a version with a successor once its sunset date is set (RFC 9745): `@<Unix seconds>`, when it was deprecated.',
      schema: { type: 'string' },
    },
    {
      name: 'Sunset',
      always: false,
      description: 'With Deprecation (RFC 8594): the HTTP date from which the version is no longer served.',
      schema: { type: 'string' },
    },
  ];
}
