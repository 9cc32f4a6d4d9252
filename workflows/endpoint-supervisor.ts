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
  SUPERVISOR_SIGNALS_PER_RUN,
} from '../core/delivery-policy';

const { recordAbandonedStreak } = proxyActivities<DeliveryActivities>({
  startToCloseTimeout: SUPERVISOR_ACTIVITY_TIMEOUT,
  retry: SUPERVISOR_ACTIVITY_RETRY,
});
const { markEndpointFailing } = proxyActivities<DeliveryActivities>({
  startToCloseTimeout: MARK_FAILING_TIMEOUT,
  retry: MARK_FAILING_RETRY,
});

/** Spec 3.1: abandoned deliveries since the last success, and whether they crossed the failing threshold. */
export class EndpointSupervisorState {
  abandoned: number;
  failing: boolean;
  episodeStartEventId: string | null;
  handled = 0;

  constructor(
    public threshold: number,
    snapshot?: SupervisorSnapshot,
  ) {
    this.abandoned = snapshot?.abandoned ?? 0;
    this.failing = snapshot?.failing ?? false;
    this.episodeStartEventId = snapshot?.episodeStartEventId ?? null;
  }

  /** Counts one abandonment under the threshold its event was published with; true when it marks the endpoint failing. */
  abandon(eventId: string, threshold = this.threshold): boolean {
    this.threshold = threshold;
    this.handled += 1;
    this.abandoned += 1;
    this.episodeStartEventId ??= eventId;
    if (this.failing || this.abandoned < this.threshold) return false;
    this.failing = true;
    return true;
  }

  succeed(): void {
    this.handled += 1;
    this.abandoned = 0;
    this.failing = false;
    this.episodeStartEventId = null;
  }

  get idle(): boolean {
    return this.abandoned === 0 && !this.failing;
  }

  snapshot(): SupervisorSnapshot {
    return { abandoned: this.abandoned, failing: this.failing, episodeStartEventId: this.episodeStartEventId };
  }
}

async function handle(input: SupervisorInput, state: EndpointSupervisorState, signal: SupervisorMessage): Promise<void> {
  if (signal.kind === 'deliverySucceeded') {
    // The success path already reset the database row in the same statement that recorded the attempt.
    state.succeed();
    return;
  }
  const marks = state.abandon(signal.eventId, signal.failingThreshold);
  if (!marks) {
    await recordAbandonedStreak(input.endpointId, state.abandoned);
    return;
  }
  const mark = {
    endpointId: input.endpointId,
    streak: state.abandoned,
    episodeStartEventId: state.episodeStartEventId ?? signal.eventId,
  };
  for (;;) {
    try {
      await markEndpointFailing(mark);
      return;
    } catch (err) {
      // The email gives up after its retries (SMTP down): the mark and the notification row are stored by then.
      // Anything else (our Postgres down longer than the retries) left nothing stored: try again, or the
      // endpoint would never be marked. Patched: runs that gave up before this change replay as they ran.
      const emailOnly = err instanceof ActivityFailure && err.cause instanceof ApplicationFailure && err.cause.type === FAILURE.notificationEmailFailed;
      if (emailOnly || !patched('mark-failing-until-stored')) {
        log.error('could not notify the merchant of a failing endpoint', { endpointId: input.endpointId, err });
        return;
      }
      log.warn('marking the endpoint failing did not complete; retrying', { endpointId: input.endpointId });
    }
  }
}

/**
 * One per endpoint (workflow id `endpoint-supervisor:<id>`), started by signal-with-start. Signals are queued
 * and handled one at a time in arrival order, so two abandonments never race on the count.
 */
export async function endpointSupervisor(input: SupervisorInput): Promise<SupervisorSnapshot> {
  const state = new EndpointSupervisorState(input.failingThreshold, input.state);
  const inbox: SupervisorMessage[] = [...(input.inbox ?? [])];
  setHandler(abandonedSignal, (payload) => {
    inbox.push(messageOf('abandoned', payload));
  });
  setHandler(deliverySucceededSignal, (payload) => {
    inbox.push(messageOf('deliverySucceeded', payload));
  });

  for (;;) {
    const woke = await condition(() => inbox.length > 0, SUPERVISOR_IDLE_TIMEOUT);
    if (!woke && state.idle) return state.snapshot();
    for (let signal = inbox.shift(); signal; signal = inbox.shift()) await handle(input, state, signal);
    if (workflowInfo().continueAsNewSuggested || state.handled >= SUPERVISOR_SIGNALS_PER_RUN) {
      await condition(allHandlersFinished);
      return continueAsNew<typeof endpointSupervisor>({ ...input, failingThreshold: state.threshold, state: state.snapshot(), inbox: [...inbox] });
    }
  }
}
