import type { Pool, PoolClient } from 'pg';
import type { ParcelEvent } from '../types';
import { applyParcelSequence, lockUnprocessed, markProcessed, unprocessedEventIds } from './store';

/**
 * The slow work for one event (crediting a wallet, emailing the customer, ...). It runs after the reply, inside
 * the transaction that marks the event processed: write through `tx` and the work commits exactly once.
 */
export type EventHandler = (event: ParcelEvent, tx: PoolClient) => Promise<void>;

/** `stale`: a parcel event older than the parcel's state already applied (its `sequence`): stored, not applied. */
export type ProcessOutcome = 'processed' | 'already_processed' | 'stale';

export interface ProcessorHooks {
  onError(err: unknown, eventId: string): void;
  /** Called after each queued attempt, whatever its result: lets tests and metrics see work finish. */
  onSettled?(eventId: string, outcome: ProcessOutcome | 'failed'): void;
}

/**
 * Works through stored events off the request path: the service waits at most 10 s for a reply,
 * so a receiver that does its work before replying turns a slow day into retries and duplicates.
 */
export class EventProcessor {
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly pool: Pool,
    private readonly handler: EventHandler,
    private readonly hooks: ProcessorHooks,
  ) {}

  /** Processes the event on a later turn of the event loop; a failure leaves it for processPending(). */
  enqueue(eventId: string): void {
    const task: Promise<void> = new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => this.process(eventId))
      .then(
        (outcome) => this.hooks.onSettled?.(eventId, outcome),
        (err: unknown) => {
          this.hooks.onError(err, eventId);
          this.hooks.onSettled?.(eventId, 'failed');
        },
      )
      .finally(() => this.inFlight.delete(task));
    this.inFlight.add(task);
  }

  async process(eventId: string): Promise<ProcessOutcome> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      const event = await lockUnprocessed(client, eventId);
      if (!event) {
        await client.query('COMMIT');
        return 'already_processed';
      }
      // Events of a parcel can arrive out of order (a retry that lands after a newer event): never let an older
      // state overwrite a newer one.
      const current = await applyParcelSequence(client, event);
      if (current) await this.handler(event, client);
      await markProcessed(client, eventId);
      await client.query('COMMIT');
      return current ? 'processed' : 'stale';
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  }

  /** Picks up events stored before a crash or restart; call it at start (or from a periodic job). */
  async processPending(): Promise<number> {
    let processed = 0;
    for (const eventId of await unprocessedEventIds(this.pool)) {
      try {
        if ((await this.process(eventId)) === 'processed') processed += 1;
      } catch (err) {
        this.hooks.onError(err, eventId);
      }
    }
    return processed;
  }

  /** Resolves once nothing is in flight, including work enqueued while waiting. */
  async drain(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }
}
