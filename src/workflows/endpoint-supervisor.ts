import {
  ActivityFailure,
  allHandlersFinished,
  ApplicationFailure,
  condition,
  continueAsNew,
  log,
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
  FAILING_NOTICE_EMAIL_RETRY,
  FAILING_NOTICE_EMAIL_TIMEOUT,
  SUPERVISOR_ACTIVITY_RETRY,
  SUPERVISOR_ACTIVITY_TIMEOUT,
  SUPERVISOR_IDLE_TIMEOUT,
  SUPERVISOR_MAX_HISTORY_EVENTS,
  SUPERVISOR_SIGNALS_PER_RUN,
} from '../core/delivery-policy';
import { EndpointSupervisorState } from './endpoint-supervisor-state';

export { EndpointSupervisorState };

const { recordAbandonment } = proxyActivities<DeliveryActivities>({
  startToCloseTimeout: SUPERVISOR_ACTIVITY_TIMEOUT,
  retry: SUPERVISOR_ACTIVITY_RETRY,
});
const { emailFailingNotice } = proxyActivities<DeliveryActivities>({
  startToCloseTimeout: FAILING_NOTICE_EMAIL_TIMEOUT,
  retry: FAILING_NOTICE_EMAIL_RETRY,
});

function emailGaveUp(err: unknown): boolean {
  return (
    err instanceof ActivityFailure &&
    err.cause instanceof ApplicationFailure &&
    err.cause.type === FAILURE.notificationEmailFailed
  );
}

/** What handling one message found: `gone` ends the supervisor (its endpoint was removed). */
type Handled = 'done' | 'gone';

/** One idempotent activity per abandonment, and the email when it marked the endpoint failing. */
async function handle(
  input: SupervisorInput,
  state: EndpointSupervisorState,
  message: SupervisorMessage,
): Promise<Handled> {
  if (message.kind === 'deliverySucceeded') {
    state.succeed();
    return 'done';
  }
  if (state.repeated(message.eventId)) return 'done';
  const { eventId, failingThreshold } = message;
  const result = await recordAbandonment({ endpointId: input.endpointId, eventId, failingThreshold });
  state.recorded(eventId, failingThreshold, result);
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

/** This run has done enough: continue as new, carrying what is still queued. */
function runIsFull(state: EndpointSupervisorState): boolean {
  const info = workflowInfo();
  return (
    info.continueAsNewSuggested ||
    state.handled >= SUPERVISOR_SIGNALS_PER_RUN ||
    info.historyLength >= SUPERVISOR_MAX_HISTORY_EVENTS
  );
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
    // Quiet for the whole period: nothing to keep (the database holds the health), so end even while failing.
    if (!woke) return state.snapshot();
    for (let message = inbox.shift(); message; message = inbox.shift()) {
      if ((await handle(input, state, message)) === 'gone') return state.snapshot();
      // A burst of signals would otherwise keep this loop, and the history, growing without end.
      if (runIsFull(state)) break;
    }
    if (runIsFull(state)) {
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
