import pg from 'pg';
import { dispatchWaiting, OUTBOX_CHANNEL, type DispatchDeps } from '../domain/outbox';

/**
 * The outbox dispatcher a worker runs beside its pollers: it hears of each stored event at once (LISTEN, notified
 * by the events table's insert trigger when the publishing transaction commits) and starts its workflow; a sweep
 * finds whatever a notification did not bring (events stored while no dispatcher listened, a lapsed lease after
 * a refused start, a notification lost with a dropped connection).
 */

export interface DispatcherOptions extends DispatchDeps {
  log?: (line: string) => void;
  /** Time between sweeps while all goes well (default SWEEP_INTERVAL_MS). */
  sweepIntervalMs?: number;
}

export interface Dispatcher {
  /** Resolves after the first sweep: events stored before the dispatcher started are being handed off. */
  ready: Promise<void>;
  /** Events this dispatcher handed off, by how it learnt of them. */
  stats(): { notified: number; swept: number };
  /** Stops listening and sweeping, and waits for a hand-off under way. */
  stop(): Promise<void>;
}

export const SWEEP_INTERVAL_MS = 5_000;
/** While Temporal or Postgres refuses, sweeps back off to this. */
const MAX_BACKOFF_MS = 30_000;
/** Events claimed per statement, and started side by side. */
export const DISPATCH_BATCH = 100;

export function startDispatcher(options: DispatcherOptions): Dispatcher {
  const log = options.log ?? (() => undefined);
  const sweepIntervalMs = options.sweepIntervalMs ?? SWEEP_INTERVAL_MS;
  const notified = new Set<string>();
  const counts = { notified: 0, swept: 0 };
  let stopped = false;
  let sweepDue = true;
  let backoffMs = sweepIntervalMs;
  let failing = false;
  let running: Promise<void> | null = null;
  let sweepTimer: NodeJS.Timeout | undefined;
  /** The listening connection, from its creation (a late event of an abandoned one changes nothing). */
  let listener: pg.Client | null = null;
  let reconnectTimer: NodeJS.Timeout | undefined;
  let resolveReady!: () => void;
  const ready = new Promise<void>((resolve) => (resolveReady = resolve));

  const scheduleSweep = (ms: number) => {
    clearTimeout(sweepTimer);
    if (stopped) return;
    sweepTimer = setTimeout(() => {
      sweepDue = true;
      kick();
    }, ms);
    sweepTimer.unref();
  };

  const outcome = (error: Error | undefined) => {
    if (error) {
      if (!failing) log(`outbox: handing events to Temporal failed (${error.message}); retrying`);
      failing = true;
      backoffMs = Math.min(backoffMs * 2, MAX_BACKOFF_MS);
    } else {
      if (failing) log('outbox: handing events to Temporal again');
      failing = false;
      backoffMs = sweepIntervalMs;
    }
  };

  /** One pass: the notified events first (newest work, lowest latency), then a sweep when one is due. */
  async function pump(): Promise<void> {
    while (!stopped && (notified.size > 0 || sweepDue)) {
      if (notified.size > 0) {
        const ids = [...notified].slice(0, DISPATCH_BATCH);
        for (const id of ids) notified.delete(id);
        try {
          const result = await dispatchWaiting(options, { ids, limit: ids.length });
          counts.notified += result.dispatched.length;
          outcome(result.error);
        } catch (err) {
          outcome(err as Error);
        }
        continue;
      }
      sweepDue = false;
      let full = false;
      try {
        const result = await dispatchWaiting(options, { limit: DISPATCH_BATCH });
        counts.swept += result.dispatched.length;
        outcome(result.error);
        // A full batch all started means more may wait: sweep again at once.
        full = result.claimed === DISPATCH_BATCH && result.dispatched.length === result.claimed;
      } catch (err) {
        outcome(err as Error);
      }
      resolveReady();
      if (full) sweepDue = true;
      else scheduleSweep(backoffMs);
    }
  }

  function kick(): void {
    if (running || stopped) return;
    running = pump().finally(() => {
      running = null;
      // Work that arrived while the last pass was ending.
      if (!stopped && (notified.size > 0 || sweepDue)) kick();
    });
  }

  async function listen(): Promise<void> {
    const client = new pg.Client({ connectionString: options.config.databaseUrl, keepAlive: true });
    listener = client;
    client.on('notification', (message) => {
      if (message.payload) notified.add(message.payload);
      kick();
    });
    client.on('error', () => reconnect(client));
    client.on('end', () => reconnect(client));
    try {
      await client.connect();
      await client.query(`LISTEN ${OUTBOX_CHANNEL}`);
    } catch {
      reconnect(client);
      return;
    }
    if (stopped || listener !== client) {
      await client.end().catch(() => undefined);
      return;
    }
    // Whatever was notified while nobody listened.
    sweepDue = true;
    kick();
  }

  function reconnect(client: pg.Client): void {
    if (listener !== client) return;
    listener = null;
    client.removeAllListeners('end');
    client.end().catch(() => undefined);
    if (stopped) return;
    reconnectTimer = setTimeout(() => {
      reconnectTimer = undefined;
      void listen();
    }, backoffMs);
    reconnectTimer.unref();
  }

  void listen();
  kick();

  return {
    ready,
    stats: () => ({ ...counts }),
    async stop() {
      stopped = true;
      clearTimeout(sweepTimer);
      clearTimeout(reconnectTimer);
      const client = listener;
      listener = null;
      if (client) {
        client.removeAllListeners('end');
        await client.end().catch(() => undefined);
      }
      await running;
      resolveReady();
    },
  };
}
