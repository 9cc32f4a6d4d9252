import { WorkflowExecutionAlreadyStartedError, type Client, type WorkflowStartOptions } from '@temporalio/client';
import { WorkflowIdReusePolicy } from '@temporalio/common';
import {
  SEARCH_ATTRIBUTES,
  WORKFLOW_ID,
  type DeliverEventInput,
  type DeliverEventWorkflow,
  type DeliveryTrigger,
  type FirstAttemptOutcome,
  type FirstAttemptThrottle,
  throttleWait,
  type ParcelOrder,
} from '../core/delivery-contract';
import { deliveryExpiresAtMs, localAttempts, localAttemptTaskTimeoutMs, throttleWaitMs } from '../core/delivery-policy';
import { formatDuration } from '../core/durations';
import { firstAttemptId } from '../core/first-attempt-id';

export { firstAttemptId };
import type { Config } from '../infra/config';

/**
 * How a deliverEvent workflow is started, whatever asked for the delivery: a publish (its automatic deliveries,
 * one workflow per event, `event:<evt_id>`) or a merchant (a resend, a recovery, a test event: one workflow per
 * delivery, `delivery:<dly_id>`). The input, the workflow task timeout its attempts need, the
 * search attributes and the summary are built here only, so every trigger runs the same ladder the same way. The
 * outbox dispatcher (domain/outbox.ts) is the one caller.
 */

/** What one workflow delivers, as the outbox stored it. */
export interface DeliveryStart {
  eventId: string;
  eventType: string;
  accountId: string;
  livemode: boolean;
  /** `automatic`: the publish's fan-out snapshot. Any other: exactly one endpoint. */
  trigger: DeliveryTrigger;
  endpointIds: string[];
  /** Endpoint id -> its delivery (dly_...). */
  deliveryIds: Record<string, string>;
  /** An automatic delivery of a parcel's event with endpoints that keep order per parcel. */
  parcelOrder?: ParcelOrder;
  /** Unix ms the delivery's age counts from (DeliverEventInput.ageFromMs); absent: from its hand-off. */
  ageFromMs?: number;
  /** The rate-limit place attempt 1 took at an earlier hand-off, which deferred it to that place (domain/outbox.ts). */
  firstAttemptPlace?: FirstAttemptThrottle;
}

/**
 * Temporal refuses to start a workflow whose search attribute value is over 2 KB (dynamic config
 * limit.searchAttributesSizeOfValueLimit, the same default on the dev server and a self-hosted cluster), measured
 * on the JSON payload. A keyword list of endpoint ids reaches it at about 68 endpoints.
 */
export const SEARCH_ATTRIBUTE_VALUE_MAX_BYTES = 2 * 1024;

/**
 * The endpoint ids a delivery workflow is searchable by: all of them when they fit, else the first ones that do.
 * An account with a wider fan-out still gets its deliveries; past the cap, find its events by account instead.
 */
export function searchableEndpointIds(endpointIds: readonly string[]): string[] {
  const kept: string[] = [];
  let size = 2; // the list's brackets
  for (const id of endpointIds) {
    const added = Buffer.byteLength(JSON.stringify(id)) + (kept.length > 0 ? 1 : 0);
    if (size + added > SEARCH_ATTRIBUTE_VALUE_MAX_BYTES) break;
    kept.push(id);
    size += added;
  }
  return kept;
}

/**
 * The attempts 1 the outbox makes itself before the start (attempt/early.ts): endpoint id -> attempt id, for every
 * endpoint of the delivery not kept in order per parcel (an ordered ladder's attempt 1 waits for its turn in the
 * workflow, which makes it).
 */
export function earlyAttemptIds(input: Pick<DeliverEventInput, 'endpointIds' | 'deliveryIds' | 'parcelOrder'>) {
  const ids = input.endpointIds.flatMap((endpointId) => {
    if (input.parcelOrder?.endpointIds.includes(endpointId)) return [];
    const deliveryId = input.deliveryIds[endpointId];
    return deliveryId ? [[endpointId, firstAttemptId(deliveryId)] as const] : [];
  });
  return Object.fromEntries(ids) as Record<string, string>;
}

/** The workflow's input: the delivery, and the ladder of the process that starts it. */
export function deliveryInput(start: DeliveryStart, config: Config): DeliverEventInput {
  const single = start.endpointIds.length === 1 ? start.endpointIds[0]! : undefined;
  const made = single !== undefined && earlyAttemptIds(start)[single] !== undefined;
  return {
    eventId: start.eventId,
    eventType: start.eventType,
    accountId: start.accountId,
    livemode: start.livemode,
    endpointIds: start.endpointIds,
    deliveryIds: start.deliveryIds,
    // Absent for a publish, the contract's default.
    ...(start.trigger === 'automatic' ? {} : { trigger: start.trigger }),
    // Read when the workflow starts and carried in its input, so a config change never alters a running ladder.
    retryDelaysMs: config.delivery.retryDelaysMs,
    timeoutMs: config.delivery.timeoutMs,
    maxAgeMs: config.delivery.maxAgeMs,
    ageFromMs: start.ageFromMs ?? Date.now(),
    failingThreshold: config.delivery.failingThreshold,
    // Attempt 1 asks with its place (attempt/early.ts); without an early attempt, the start waits for the place.
    ...(made && start.firstAttemptPlace ? { firstAttemptThrottles: { [single]: start.firstAttemptPlace } } : {}),
    ...(start.parcelOrder ? { parcelOrder: start.parcelOrder } : {}),
  };
}

/** `event:<evt_id>` for a publish's automatic deliveries, `delivery:<dly_id>` for one a merchant asked for. */
export function deliveryWorkflowId(input: DeliverEventInput): string {
  if ((input.trigger ?? 'automatic') === 'automatic') return WORKFLOW_ID.deliverEvent(input.eventId);
  const deliveryId = input.endpointIds.length === 1 ? input.deliveryIds?.[input.endpointIds[0]!] : undefined;
  if (!deliveryId)
    throw new Error(`a ${input.trigger} delivery of ${input.eventId} must name exactly one endpoint and its delivery`);
  return WORKFLOW_ID.delivery(deliveryId);
}

function describeOutcome(outcome: FirstAttemptOutcome): string {
  if (outcome.kind === 'skipped') return `skipped (${outcome.reason})`;
  const answer = outcome.statusCode === null ? (outcome.error ?? 'no answer') : `HTTP ${outcome.statusCode}`;
  return `${outcome.succeeded ? 'succeeded' : 'failed'}, ${answer} in ${outcome.durationMs} ms`;
}

/**
 * Temporal refuses a start whose details are over 20,000 bytes (dynamic config limit.userMetadataDetailsSize, the
 * same default on the dev server and a self-hosted cluster): a fan-out's attempts 1 are listed one by one up to
 * this many, and counted past it.
 */
const FIRST_ATTEMPTS_LISTED = 10;

function describeFirstAttempts(outcomes: Record<string, FirstAttemptOutcome>): string[] {
  const entries = Object.entries(outcomes);
  if (entries.length <= FIRST_ATTEMPTS_LISTED) {
    return entries.flatMap(([endpointId, outcome]) => [
      '',
      `**Attempt 1** to \`${endpointId}\`, made before the start: ${describeOutcome(outcome)}`,
    ]);
  }
  const count = (kind: string) =>
    entries.filter(
      ([, outcome]) => (outcome.kind === 'skipped' ? 'skipped' : outcome.succeeded ? 'succeeded' : 'failed') === kind,
    ).length;
  return [
    '',
    `**Attempts 1** to ${entries.length} endpoints, made before the start: ${count('succeeded')} succeeded, ${count('failed')} failed, ${count('skipped')} skipped`,
  ];
}

function describeThrottle(throttle: FirstAttemptThrottle): string {
  return `throttled: ${throttleWait(throttle)}; the start is delayed until then`;
}

function describe(input: DeliverEventInput): { staticSummary: string; staticDetails: string } {
  const mode = input.livemode ? 'live' : 'test';
  const count = input.endpointIds.length;
  const ladder = input.retryDelaysMs.map(formatDuration).join(', ');
  const trigger = input.trigger ?? 'automatic';
  const asked = trigger !== 'automatic';
  const target = asked ? input.endpointIds.join(', ') : `${count} endpoint${count === 1 ? '' : 's'}`;
  return {
    staticSummary: `${asked ? `${trigger} ` : ''}${input.eventType} ${input.eventId} -> ${target} (${input.accountId}, ${mode})`,
    staticDetails: [
      `**Event** \`${input.eventId}\` (${input.eventType}), account \`${input.accountId}\`, ${mode} mode`,
      '',
      ...(asked ? [`**${trigger}** delivery \`${input.deliveryIds?.[input.endpointIds[0]!]}\``, ''] : []),
      `**Endpoints**: ${input.endpointIds.map((id) => `\`${id}\``).join(', ')}`,
      '',
      ...(input.parcelOrder
        ? [
            `**In order per parcel** \`${input.parcelOrder.parcelId}\`, sequence ${input.parcelOrder.sequence}, to ` +
              input.parcelOrder.endpointIds.map((id) => `\`${id}\``).join(', '),
            '',
          ]
        : []),
      `**Ladder**: ${input.retryDelaysMs.length + 1} attempts, waits ${ladder}; ` +
        `timeout ${formatDuration(input.timeoutMs)} per attempt; failing after ${input.failingThreshold} abandoned deliveries` +
        (input.maxAgeMs === undefined
          ? ''
          : `; given up ${formatDuration(input.maxAgeMs)} after it was stored if not delivered`),
      ...describeFirstAttempts(input.firstAttemptOutcomes ?? {}),
      ...Object.entries(input.firstAttemptThrottles ?? {}).flatMap(([endpointId, throttle]) => [
        '',
        `**Attempt 1** to \`${endpointId}\` ${describeThrottle(throttle)}`,
      ]),
    ].join('\n'),
  };
}

/**
 * How long the start of a delivery whose attempt 1 is throttled waits (the server's durable start timer), from
 * `nowMs`: the throttle's wait, as a workflow's throttle timer would take it. Undefined when nothing holds it.
 */
export function throttledStartDelayMs(input: DeliverEventInput, nowMs: number): number | undefined {
  const throttles = Object.values(input.firstAttemptThrottles ?? {});
  if (throttles.length === 0) return undefined;
  const delayMs = Math.max(...throttles.map((throttle) => throttleWaitMs(throttle, nowMs)));
  // No wait runs past the delivery's max age: the workflow then starts at it, and gives the delivery up.
  const expiresAtMs = deliveryExpiresAtMs(input);
  return expiresAtMs === undefined ? delayMs : Math.max(1, Math.min(delayMs, expiresAtMs - nowMs));
}

/** Everything the start asks of Temporal besides the input. */
export function deliveryStartOptions(
  input: DeliverEventInput,
  options: { taskQueue: string; eager: boolean },
  nowMs = Date.now(),
): WorkflowStartOptions<DeliverEventWorkflow> {
  const delayMs = throttledStartDelayMs(input, nowMs);
  return {
    workflowId: deliveryWorkflowId(input),
    taskQueue: options.taskQueue,
    args: [input],
    workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
    // A delayed start's first task is the server's to hand out when the delay ends: never eager.
    ...(delayMs === undefined ? { requestEagerStart: options.eager } : { startDelay: delayMs }),
    // A one-ladder workflow's local steps run inside the workflow task, which must outlast them (core/delivery-policy.ts).
    ...(localAttempts(input.endpointIds.length)
      ? { workflowTaskTimeout: localAttemptTaskTimeoutMs(input.timeoutMs) }
      : {}),
    typedSearchAttributes: [
      { key: SEARCH_ATTRIBUTES.accountId, value: input.accountId },
      { key: SEARCH_ATTRIBUTES.livemode, value: input.livemode },
      { key: SEARCH_ATTRIBUTES.eventId, value: input.eventId },
      { key: SEARCH_ATTRIBUTES.eventType, value: input.eventType },
      { key: SEARCH_ATTRIBUTES.endpointIds, value: searchableEndpointIds(input.endpointIds) },
    ],
    ...describe(input),
  };
}

/**
 * Starts the delivery's workflow, waiting at most `deadlineMs` for Temporal. Idempotent: an existing workflow
 * of this id (running or finished) is success, never a second delivery.
 */
export async function startDelivery(
  temporal: Client,
  input: DeliverEventInput,
  options: { taskQueue: string; eager: boolean; deadlineMs: number },
): Promise<void> {
  try {
    await temporal.withDeadline(Date.now() + options.deadlineMs, () =>
      temporal.workflow.start<DeliverEventWorkflow>('deliverEvent', deliveryStartOptions(input, options)),
    );
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
}
