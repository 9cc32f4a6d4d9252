import type { RecordResult } from '../core/delivery-contract';
import * as endpoints from '../db/endpoints';
import type { EndpointScope } from '../db/endpoints';
import { withTransaction, type Db, type Pool } from '../db/pool';
import { recordAudit, SYSTEM_ACTOR, type AuditActor } from './audit-log';
import {
  ENDPOINT_ID,
  endpointMissing,
  ringOf,
  toEndpointRecord,
  type EndpointDeps,
  type EndpointRecord,
} from './endpoints';

/**
 * An endpoint's lifecycle beyond its settings: pause and resume by its owner (API, CLI, developers page), and the
 * engine's disable after a 410 Gone answer. Each is one function and one transaction, the place where whatever
 * must happen with it happens: its audit entry (domain/audit-log.ts) when it changed something, and the parcel
 * system's operational event (endpoint.paused, endpoint.resumed, endpoint.disabled), published by the endpoint
 * row's own trigger in the same transaction (db/migrations, operational webhooks).
 *
 * | From | Action | To |
 * |---|---|---|
 * | enabled or failing | pause | paused (the health mark kept beneath) |
 * | paused | resume | the mark beneath: enabled or failing |
 * | any but deleted | an attempt answered 410 | disabled, `disabled_reason: "gone"` |
 * | disabled | PATCH `disabled: false` | the mark beneath, `disabled_reason: null` |
 *
 * While paused, attempts are held (attempt/run.ts): not made, not counted, re-checked on a durable timer
 * (core/delivery-policy.ts heldRecheckMs); a delivery still expires at its max age. Pausing again keeps the
 * first pause's time; resuming an endpoint not paused changes nothing.
 */

/** Pauses the endpoint: its new events and pending retries are held until it is resumed. */
export async function pauseEndpoint(
  deps: EndpointDeps,
  scope: EndpointScope,
  id: string,
  actor: AuditActor,
): Promise<EndpointRecord> {
  return changeLifecycle(deps, scope, id, actor, 'endpoint.paused', endpoints.pauseEndpoint);
}

/** Resumes the endpoint: its held deliveries go out at their next re-check, in order and within its rate limit. */
export async function resumeEndpoint(
  deps: EndpointDeps,
  scope: EndpointScope,
  id: string,
  actor: AuditActor,
): Promise<EndpointRecord> {
  return changeLifecycle(deps, scope, id, actor, 'endpoint.resumed', endpoints.resumeEndpoint);
}

/** A pause or a resume and, when it changed the endpoint, its audit entry: one transaction. */
async function changeLifecycle(
  deps: EndpointDeps,
  scope: EndpointScope,
  id: string,
  actor: AuditActor,
  action: 'endpoint.paused' | 'endpoint.resumed',
  change: typeof endpoints.pauseEndpoint,
): Promise<EndpointRecord> {
  const result = ENDPOINT_ID.test(id)
    ? await withTransaction(deps.pool, async (tx) => {
        const changed = await change(tx, scope, id);
        if (changed?.changed) {
          await recordAudit(tx, { ...scope, action, actor, target: { type: 'webhook_endpoint', id } });
        }
        return changed;
      })
    : undefined;
  if (!result) throw endpointMissing(id);
  return toEndpointRecord(result.row, ringOf(deps));
}

/**
 * An attempt answered 410 Gone: its record (`record`, written on the transaction given) and the endpoint's disable
 * commit together (db/endpoints.ts disableGoneEndpoint), so no later attempt of any delivery reads it enabled.
 * The result says `gone`, and the ladder stops (workflows/deliver-event.ts).
 */
export async function recordGoneAttempt(
  pool: Pool,
  target: { endpointId: string; deliveryId: string },
  record: (tx: Db) => Promise<RecordResult>,
): Promise<RecordResult> {
  return withTransaction(pool, async (tx) => {
    const stored = await record(tx);
    const disabled = await endpoints.disableGoneEndpoint(tx, target.endpointId, target.deliveryId);
    if (disabled?.disabled) {
      await recordAudit(tx, {
        accountId: disabled.accountId,
        livemode: disabled.livemode,
        action: 'endpoint.disabled',
        actor: SYSTEM_ACTOR,
        target: { type: 'webhook_endpoint', id: target.endpointId },
      });
    }
    return { ...stored, gone: true };
  });
}
