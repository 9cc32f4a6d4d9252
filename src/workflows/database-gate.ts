import { condition } from '@temporalio/workflow';

/**
 * While our Postgres is down, one ladder of an event probes it on a backoff and the event's other ladders wait
 * here. Waiting writes nothing to history, so an outage costs one probe's events per backoff instead of one per
 * endpoint: 100 endpoints each polling every minute would pass Temporal's 50,000-event history limit within
 * the hour, and the workflow, with its deliveries, would be terminated.
 */
export class DatabaseGate {
  private prober: string | null = null;

  /** Resolves once no other ladder is probing. */
  async waitTurn(ladder: string): Promise<void> {
    await condition(() => this.prober === null || this.prober === ladder);
  }

  /** The ladder saw the database unavailable: it probes from now on, unless another ladder already does. */
  claim(ladder: string): boolean {
    this.prober ??= ladder;
    return this.prober === ladder;
  }

  /** The database answered the ladder (or the ladder is done): the others may go. */
  release(ladder: string): void {
    if (this.prober === ladder) this.prober = null;
  }
}
