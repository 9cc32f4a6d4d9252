import Type, { type Static } from 'typebox';
import { ApiError } from '../core/errors';
import { randomBase62 } from '../core/ids';
import {
  isOperationalEventType,
  OPERATIONAL_DELIVERY_EVENT_TYPES,
  OPERATIONAL_EVENT_TYPES,
  type OperationalEventType,
} from '../core/operational-event-schemas';
import { generateSecret, sealSecret } from '../core/secrets';
import { LATEST_API_VERSION } from '../core/versions';
import type { Db, Pool } from '../db/pool';
import * as operational from '../db/operational-webhooks';
import type { Config } from '../infra/config';
import { checkWebhookUrl, type Lookup } from '../infra/ssrf';

/**
 * Operational webhooks: endpoints of the parcel system, told when a merchant's endpoint or delivery needs
 * attention (core/operational-event-schemas.ts lists the kinds). An operational endpoint is an endpoint of the
 * reserved account `acct_operational` (db/operational-webhooks.ts), so the one delivery engine delivers to it
 * (signed, on the same ladder, in the Temporal UI) and the outbox's turns between accounts keep its events and a
 * merchant's from waiting on each other. Its events are published in the transaction of the change they report:
 * by database triggers for the changes the database makes (failing, recovered, disabled, a delivery abandoned or
 * expired), and by publishOperationalEvent for a caller's own transaction.
 */

export interface OperationalWebhookDeps {
  pool: Pool;
  config: Pick<Config, 'webhook'>;
  lookup?: Lookup;
}

export const OPERATIONAL_ENDPOINT_PREFIX = 'owe_';
const OPERATIONAL_ENDPOINT_ID = /^owe_[A-Za-z0-9]{1,64}$/;

/** The parcel system needs a handful; the cap keeps one operational event's fan-out small. */
export const MAX_OPERATIONAL_ENDPOINTS = 20;

export const OperationalEndpointRecord = Type.Object({
  id: Type.String({ description: 'owe_...' }),
  object: Type.Literal('operational_webhook_endpoint'),
  url: Type.String(),
  events: Type.Array(Type.String(), {
    description: 'The operational kinds it receives; every kind when it was registered without a list.',
  }),
  created: Type.Integer({ description: 'Unix seconds.' }),
});
export type OperationalEndpointRecord = Static<typeof OperationalEndpointRecord>;

export const OperationalEndpointWithSecret = Type.Object({
  ...OperationalEndpointRecord.properties,
  secret: Type.String({ description: 'Signing secret (whsec_...); shown only in this response.' }),
});
export type OperationalEndpointWithSecret = Static<typeof OperationalEndpointWithSecret>;

function toRecord(row: operational.OperationalEndpointRow): OperationalEndpointRecord {
  return {
    id: row.id,
    object: 'operational_webhook_endpoint',
    url: row.url,
    events: row.events.length === 0 ? [...OPERATIONAL_EVENT_TYPES] : row.events,
    created: Math.floor(row.created_at.getTime() / 1000),
  };
}

function validateKinds(events: readonly string[]): string[] {
  const seen = new Set<string>();
  events.forEach((kind, index) => {
    if (!isOperationalEventType(kind)) {
      throw new ApiError(
        'unknown_event_type',
        `Unknown operational event kind '${kind.slice(0, 100)}'; expected one of ${OPERATIONAL_EVENT_TYPES.join(', ')}.`,
        { param: `events[${index}]` },
      );
    }
    if (seen.has(kind)) {
      throw new ApiError('duplicate_event_type', `The event kind '${kind}' is listed more than once.`, {
        param: `events[${index}]`,
      });
    }
    seen.add(kind);
  });
  return [...seen];
}

/** Validates everything before writing; the secret is in this answer only. */
export async function registerOperationalEndpoint(
  deps: OperationalWebhookDeps,
  input: { url: string; events?: string[] },
): Promise<OperationalEndpointWithSecret> {
  const events = validateKinds(input.events ?? []);
  const url = await checkWebhookUrl(input.url, {
    allowPrivateTargets: deps.config.webhook.allowPrivateTargets,
    lookup: deps.lookup,
  });
  const secret = generateSecret();
  const id = OPERATIONAL_ENDPOINT_PREFIX + randomBase62(24);
  const row = await operational.insertOperationalEndpoint(
    deps.pool,
    {
      id,
      url: url.href,
      events,
      sealedSecret: sealSecret(secret, id, deps.config.webhook.secretEncryptionKeys),
      apiVersion: LATEST_API_VERSION,
    },
    MAX_OPERATIONAL_ENDPOINTS,
  );
  if (!row) {
    throw new ApiError(
      'endpoint_limit_reached',
      `At most ${MAX_OPERATIONAL_ENDPOINTS} operational webhook endpoints; delete one first.`,
    );
  }
  return { ...toRecord(row), secret };
}

export async function listOperationalEndpoints(
  deps: Pick<OperationalWebhookDeps, 'pool'>,
): Promise<OperationalEndpointRecord[]> {
  return (await operational.listOperationalEndpoints(deps.pool)).map(toRecord);
}

export async function deleteOperationalEndpoint(deps: Pick<OperationalWebhookDeps, 'pool'>, id: string): Promise<void> {
  const deleted = OPERATIONAL_ENDPOINT_ID.test(id) && (await operational.deleteOperationalEndpoint(deps.pool, id));
  if (!deleted) {
    const shown = id.length > 80 ? `${id.slice(0, 80)}...` : id;
    throw new ApiError('resource_missing', `No such operational webhook endpoint: '${shown}'.`);
  }
}

export interface OperationalEventInput {
  /** The merchant endpoint the event is about (we_...). */
  endpointId: string;
  /** For delivery.abandoned and delivery.expired only: the delivery given up. */
  delivery?: { eventId: string; eventType: string; attempts: number; reason: string };
}

/**
 * Publishes an operational event in the caller's transaction: pass the client of the transaction that makes the
 * change, so the event is stored (durably, with a delivery per subscribed operational endpoint, handed off by the
 * outbox) if and only if the change commits. The endpoint's url, status, account and mode are read in that
 * transaction. Returns the event's id, or null when no operational endpoint takes the kind.
 */
export async function publishOperationalEvent(
  db: Db,
  kind: OperationalEventType,
  input: OperationalEventInput,
): Promise<string | null> {
  const withDelivery = OPERATIONAL_DELIVERY_EVENT_TYPES.includes(kind);
  if (withDelivery !== (input.delivery !== undefined)) {
    throw new Error(`${kind} ${withDelivery ? 'needs' : 'takes no'} delivery`);
  }
  return operational.insertOperationalEvent(db, kind, input.endpointId, input.delivery ?? null);
}
