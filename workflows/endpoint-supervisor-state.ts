import type { RecordAbandonmentResult, SupervisorSnapshot } from '../core/delivery-contract';
import { SUPERVISOR_RECENT_ABANDONMENTS } from '../core/delivery-policy';

/**
 * What an endpoint supervisor holds between signals. Since endpoint health moved into the database, the count
 * here only mirrors the database's last answer (for the workflow's result and the Temporal UI); runs that handled
 * signals before that change still count here (`abandon`, `succeed`) when they replay.
 */
export class EndpointSupervisorState {
  abandoned: number;
  failing: boolean;
  episodeStartEventId: string | null;
  /** Signals handled in this run: the run continues as new after SUPERVISOR_SIGNALS_PER_RUN. */
  handled = 0;
  /** Events whose abandonment was recorded lately, oldest first: a repeated signal is dropped without an activity. */
  private readonly recent: string[];
  private readonly recentSet: Set<string>;

  constructor(
    public threshold: number,
    snapshot?: SupervisorSnapshot,
    recent: string[] = [],
  ) {
    this.abandoned = snapshot?.abandoned ?? 0;
    this.failing = snapshot?.failing ?? false;
    this.episodeStartEventId = snapshot?.episodeStartEventId ?? null;
    this.recent = recent.slice(-SUPERVISOR_RECENT_ABANDONMENTS);
    this.recentSet = new Set(this.recent);
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

  /** true when this event's abandonment was already recorded by this supervisor (a repeated signal). */
  seen(eventId: string): boolean {
    return this.recentSet.has(eventId);
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

  get idle(): boolean {
    return this.abandoned === 0 && !this.failing;
  }

  snapshot(): SupervisorSnapshot {
    return { abandoned: this.abandoned, failing: this.failing, episodeStartEventId: this.episodeStartEventId };
  }

  recentAbandonments(): string[] {
    return [...this.recent];
  }
}
