import type { RecordAbandonmentResult, SupervisorSnapshot } from '../core/delivery-contract';
import { SUPERVISOR_RECENT_ABANDONMENTS } from '../core/delivery-policy';

/**
 * What an endpoint supervisor holds between signals. The endpoint's health is the database's
 * (domain/endpoint-health.ts): the streak and the mark here only mirror its last answer, for the workflow's result
 * and the Temporal UI.
 */
export class EndpointSupervisorState {
  abandoned: number;
  failing: boolean;
  /** Signals handled in this run: the run continues as new after SUPERVISOR_SIGNALS_PER_RUN. */
  handled = 0;
  /** Events whose abandonment was recorded lately, oldest first: a repeated signal is dropped without an activity. */
  private readonly recent: string[];
  private readonly recentSet: Set<string>;

  constructor(
    /** The threshold of the last abandonment recorded (each carries its event's), handed to the next run. */
    public threshold: number,
    snapshot?: SupervisorSnapshot,
    recent: string[] = [],
  ) {
    this.abandoned = snapshot?.abandoned ?? 0;
    this.failing = snapshot?.failing ?? false;
    this.recent = recent.slice(-SUPERVISOR_RECENT_ABANDONMENTS);
    this.recentSet = new Set(this.recent);
  }

  /** A success: the database reset the streak and the mark in the statement that recorded it. */
  succeed(): void {
    this.handled += 1;
    this.abandoned = 0;
    this.failing = false;
  }

  /** true when this event's abandonment was already recorded by this supervisor: the signal counts as handled. */
  repeated(eventId: string): boolean {
    if (!this.recentSet.has(eventId)) return false;
    this.handled += 1;
    return true;
  }

  /** The database's answer to an abandonment: remembered, and mirrored for the workflow's result. */
  recorded(eventId: string, threshold: number, result: RecordAbandonmentResult): void {
    this.threshold = threshold;
    this.handled += 1;
    this.abandoned = result.streak;
    this.failing = result.failing;
    this.recentSet.add(eventId);
    this.recent.push(eventId);
    while (this.recent.length > SUPERVISOR_RECENT_ABANDONMENTS) this.recentSet.delete(this.recent.shift() as string);
  }

  snapshot(): SupervisorSnapshot {
    return { abandoned: this.abandoned, failing: this.failing };
  }

  recentAbandonments(): string[] {
    return [...this.recent];
  }
}
