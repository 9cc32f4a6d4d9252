import {
  ActivityFailure,
  allHandlersFinished,
  ApplicationFailure,
  condition,
  continueAsNew,
  log,
  patched,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import {
  abandonedSignal,
  deliverySucceededSignal,
  FAILURE,
  messageOf,
  type DeliveryActivities,
  type SupervisorInput,
  type SupervisorMessage,
  type SupervisorSnapshot,
} from '../core/delivery-contract';
import {
  MARK_FAILING_RETRY,
  MARK_FAILING_TIMEOUT,
  SUPERVISOR_ACTIVITY_RETRY,
  SUPERVISOR_ACTIVITY_TIMEOUT,
  SUPERVISOR_IDLE_TIMEOUT,
  SUPERVISOR_MAX_HISTORY_EVENTS,
  SUPERVISOR_SIGNALS_PER_RUN,
} from '../core/delivery-policy';
import { EndpointSupervisorState } from './endpoint-supervisor-state';

export { EndpointSupervisorState };

/**
 * Changes to running supervisors, each behind patched() so histories written before replay as they ran:
 * the database owns endpoint health (a signal becomes one idempotent recordAbandonment, plus an email once);
 * the history stays bounded (continue as new mid-inbox, end when idle or when the endpoint is gone).
 */
const HEALTH_IN_DATABASE = 'endpoint-health-in-database';
const BOUNDED_HISTORY = 'supervisor-bounded-history';

const { recordAbandonedStreak, recordAbandonment } = proxyActivities<DeliveryActivities>({
  startToCloseTimeout: SUPERVISOR_ACTIVITY_TIMEOUT,
  retry: SUPERVISOR_ACTIVITY_RETRY,
});
const { markEndpointFailing, emailFailingNotice } = proxyActivities<DeliveryActivities>({
  startToCloseTimeout: MARK_FAILING_TIMEOUT,
  retry: MARK_FAILING_RETRY,
});

function emailGaveUp(err: unknown): boolean {
  return err instanceof ActivityFailure && err.cause instanceof ApplicationFailure && err.cause.type === FAILURE.notificationEmailFailed;
}

/** What handling one message found: `gone` ends the supervisor (its endpoint was removed). */
type Handled = 'done' | 'gone';

/** Endpoint health in the database: one idempotent activity per abandonment, and the email when it marked failing. */
async function handleInDatabase(input: SupervisorInput, state: EndpointSupervisorState, message: SupervisorMessage): Promise<Handled> {
  if (message.kind === 'deliverySucceeded') {
    // The database reset the streak and the mark in the statement that recorded the success.
    state.succeed();
    return 'done';
  }
  if (state.seen(message.eventId)) {
    state.handled += 1;
    return 'done';
  }
  const failingThreshold = message.failingThreshold ?? state.threshold;
  const result = await recordAbandonment({ endpointId: input.endpointId, eventId: message.eventId, failingThreshold });
  state.recorded(message.eventId, failingThreshold, result);
  if (result.endpointGone) return 'gone';
  if (result.notificationId) {
    try {
      await emailFailingNotice(result.notificationId);
    } catch (err) {
      // Only the email gives up (SMTP down for its hour of retries): the mark and the notification row are stored.
      if (!emailGaveUp(err)) throw err;
      log.error('could not email the merchant of a failing endpoint', { endpointId: input.endpointId, err });
    }
  }
  return 'done';
}

/** How runs that began before HEALTH_IN_DATABASE handled a message: the count kept here, mirrored into the row. */
async function handleLegacy(input: SupervisorInput, state: EndpointSupervisorState, signal: SupervisorMessage): Promise<Handled> {
  if (signal.kind === 'deliverySucceeded') {
    state.succeed();
    return 'done';
  }
  const marks = state.abandon(signal.eventId, signal.failingThreshold);
  if (!marks) {
    await recordAbandonedStreak(input.endpointId, state.abandoned);
    return 'done';
  }
  const mark = { endpointId: input.endpointId, streak: state.abandoned, episodeStartEventId: state.episodeStartEventId ?? signal.eventId };
  for (;;) {
    try {
      await markEndpointFailing(mark);
      return 'done';
    } catch (err) {
      if (emailGaveUp(err) || !patched('mark-failing-until-stored')) {
        log.error('could not notify the merchant of a failing endpoint', { endpointId: input.endpointId, err });
        return 'done';
      }
      log.warn('marking the endpoint failing did not complete; retrying', { endpointId: input.endpointId });
    }
  }
}

function handle(input: SupervisorInput, state: EndpointSupervisorState, message: SupervisorMessage): Promise<Handled> {
  return patched(HEALTH_IN_DATABASE) ? handleInDatabase(input, state, message) : handleLegacy(input, state, message);
}

/** This run has done enough: continue as new, carrying what is still queued. */
function runIsFull(state: EndpointSupervisorState): boolean {
  const info = workflowInfo();
  if (info.continueAsNewSuggested || state.handled >= SUPERVISOR_SIGNALS_PER_RUN) return true;
  return info.historyLength >= SUPERVISOR_MAX_HISTORY_EVENTS && patched(BOUNDED_HISTORY);
}

/**
 * One per endpoint (workflow id `endpoint-supervisor:<id>`), started by signal-with-start. Signals are queued and
 * handled one at a time in arrival order; the endpoint's health itself is the database's (domain/endpoint-health.ts).
 * Its history stays bounded whatever the signal rate: it continues as new once a run is full, even with signals
 * still queued, and it ends when its endpoint is removed or after a quiet period.
 */
export async function endpointSupervisor(input: SupervisorInput): Promise<SupervisorSnapshot> {
  const state = new EndpointSupervisorState(input.failingThreshold, input.state, input.recentAbandonments);
  const inbox: SupervisorMessage[] = [...(input.inbox ?? [])];
  setHandler(abandonedSignal, (payload) => {
    inbox.push(messageOf('abandoned', payload));
  });
  setHandler(deliverySucceededSignal, (payload) => {
    inbox.push(messageOf('deliverySucceeded', payload));
  });

  for (;;) {
    const woke = await condition(() => inbox.length > 0, input.idleTimeoutMs ?? SUPERVISOR_IDLE_TIMEOUT);
    // Quiet for the whole period: nothing to keep (the database holds the health), so end even with a count.
    if (!woke && (state.idle || patched(BOUNDED_HISTORY))) return state.snapshot();
    let full = false;
    for (let message = inbox.shift(); message; message = inbox.shift()) {
      if ((await handle(input, state, message)) === 'gone') return state.snapshot();
      full = runIsFull(state);
      // A burst of signals would otherwise keep this loop, and the history, growing without end.
      if (full && patched(BOUNDED_HISTORY)) break;
    }
    if (full || runIsFull(state)) {
      await condition(allHandlersFinished);
      return continueAsNew<typeof endpointSupervisor>({
        ...input,
        failingThreshold: state.threshold,
        state: state.snapshot(),
        inbox: [...inbox],
        recentAbandonments: state.recentAbandonments(),
      });
    }
  }
}
