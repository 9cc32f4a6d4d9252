import pg from 'pg';
import { dispatchWaiting, nextDueInMs, OUTBOX_CHANNEL, type DispatchDeps } from '../domain/outbox';
import { NotifiedQueue } from './notified-queue';

/**
 * The outbox dispatcher a worker runs beside its pollers: it hears of each stored event, and of each delivery a
 * merchant asked for (resend, recover, test), at once (LISTEN, notified by the insert triggers when the storing
 * transaction commits) and starts its workflow; a sweep finds whatever a notification did not bring (rows stored
 * while no dispatcher listened, a lapsed lease after a refused start, a notification lost with a dropped
 * connection). A recovery's deliveries fall due one after another (dispatch_after): after each sweep the
 * dispatcher sleeps until the next one is due, if that is sooner than its next sweep.
 */

export interface DispatcherOptions extends DispatchDeps {
  log?: (line: string) => void;
  /** Time between sweeps while all goes well (default SWEEP_INTERVAL_MS). */
  sweepIntervalMs?: number;
}

export interface Dispatcher {
  /** Resolves after the first sweep: what was stored before the dispatcher started is being handed off. */
  ready: Promise<void>;
  /** Events and deliveries this dispatcher handed off, by how it learnt of them. */
  stats(): { notified: number; swept: number };
  /**
   * Something kept back may be claimed now (an account at its share gave a place back): sweeps within
   * MIN_DUE_WAIT_MS, however often it is called.
   */
  wake(): void;
  /** Stops listening and sweeping, and waits for a hand-off under way. */
  stop(): Promise<void>;
}

export const SWEEP_INTERVAL_MS = 5_000;
/** While Temporal or Postgres refuses, sweeps back off to this. */
const MAX_BACKOFF_MS = 30_000;
/** Events (and due deliveries) claimed per statement, and started side by side. */
export const DISPATCH_BATCH = 100;
/**
 * The shortest wait for the next delivery due: a recovery paced faster than this is started in small batches
 * (all that fell due meanwhile) rather than by a timer per delivery.
 */
export const MIN_DUE_WAIT_MS = 20;
/** Passes over notified events under way at once that hold one account's events. */
export const NOTIFIED_PASSES = 2;
/**
 * Passes under way at once in all: an account whose passes are all taken (a flood of its publishes, started while
 * Temporal is slow to answer) leaves the rest to the other accounts, whose events so never wait for its starts.
 */
export const MAX_NOTIFIED_PASSES = 6;

export function startDispatcher(options: DispatcherOptions): Dispatcher {
  const log = options.log ?? (() => undefined);
  const sweepIntervalMs = options.sweepIntervalMs ?? SWEEP_INTERVAL_MS;
  const notified = new NotifiedQueue();
  const counts = { notified: 0, swept: 0 };
  let stopped = false;
  let sweepDue = true;
  let backoffMs = sweepIntervalMs;
  let failing = false;
  let sweepTimer: NodeJS.Timeout | undefined;
  let wakeTimer: NodeJS.Timeout | undefined;
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
      if (!failing) log(`outbox: starting workflows failed (${error.message}); retrying`);
      failing = true;
      backoffMs = Math.min(backoffMs * 2, MAX_BACKOFF_MS);
    } else {
      if (failing) log('outbox: starting workflows again');
      failing = false;
      backoffMs = sweepIntervalMs;
    }
  };

  /** Every pass under way, for stop() to wait for. */
  const passes = new Set<Promise<void>>();
  let notifiedPasses = 0;
  /** How many passes under way hold each account's events. */
  const accountPasses = new Map<string, number>();
  const passesOf = (account: string) => accountPasses.get(account) ?? 0;
  let sweeping = false;

  const track = (pass: Promise<void>) => {
    passes.add(pass);
    void pass.finally(() => {
      passes.delete(pass);
      kick();
    });
  };

  /**
   * Hands off notified events and deliveries: the newest work, and what publish-to-first-attempt latency waits
   * on. A delivery may be a recovery's first: a sweep after it finds when the next one falls due.
   */
  async function dispatchNotified(ids: string[], accounts: string[]): Promise<void> {
    // The pass's place goes to the next one once Temporal has answered its starts that were not waiting for their
    // first attempts: those may wait up to a slow receiver's timeout, and events notified meanwhile must not wait
    // behind them (they are bounded by the early attempts' own limit, WORKER_CONCURRENCY).
    let passing = true;
    const handOver = () => {
      if (!passing) return;
      passing = false;
      notifiedPasses--;
      for (const account of accounts) {
        const left = passesOf(account) - 1;
        if (left > 0) accountPasses.set(account, left);
        else accountPasses.delete(account);
      }
      kick();
    };
    try {
      const result = await dispatchWaiting(options, { ids, limit: ids.length, onStartsAnswered: handOver });
      counts.notified += result.dispatched.length;
      outcome(result.error);
      // A recovery's next delivery, or an attempt 1 deferred to its place: a sweep finds when they fall due.
      if (result.dispatched.some((id) => id.startsWith('dly_')) || result.deferred.length > 0) sweepDue = true;
    } catch (err) {
      outcome(err as Error);
    } finally {
      handOver();
    }
  }

  /** Until the next sweep: the interval (or the backoff), or sooner when a waiting delivery falls due first. */
  async function nextSweepInMs(): Promise<number> {
    if (failing) return backoffMs;
    const due = await nextDueInMs(options).catch(() => null);
    return due === null ? backoffMs : Math.min(backoffMs, Math.max(MIN_DUE_WAIT_MS, Math.ceil(due)));
  }

  /**
   * Sweeps up whatever a notification did not bring; again at once after a full batch all started, else after
   * the interval or when the next delivery falls due.
   */
  async function sweep(): Promise<void> {
    let full = false;
    let waitMs = backoffMs;
    try {
      const result = await dispatchWaiting(options, { limit: DISPATCH_BATCH });
      counts.swept += result.dispatched.length;
      outcome(result.error);
      full = result.claimed >= DISPATCH_BATCH && result.dispatched.length + result.deferred.length === result.claimed;
      if (!full) waitMs = await nextSweepInMs();
    } catch (err) {
      outcome(err as Error);
      waitMs = backoffMs;
    } finally {
      sweeping = false;
    }
    resolveReady();
    if (full) sweepDue = true;
    else scheduleSweep(waitMs);
  }

  /**
   * Starts what is due. Notified events go out in passes side by side (up to NOTIFIED_PASSES holding an account's
   * events, MAX_NOTIFIED_PASSES in all): an event must not wait for the start of one notified just before it.
   * Past that many, notifications gather into batches of up to DISPATCH_BATCH, taken in turns across accounts
   * (worker/notified-queue.ts). A pass whose other starts are answered goes on waiting for the ones held by their first
   * attempts beside the next passes. One sweep at a time.
   */
  function kick(): void {
    if (stopped) return;
    while (notified.size > 0 && notifiedPasses < MAX_NOTIFIED_PASSES) {
      const { ids, accounts } = notified.take(DISPATCH_BATCH, (account) => passesOf(account) < NOTIFIED_PASSES);
      if (ids.length === 0) break;
      notifiedPasses++;
      for (const account of accounts) accountPasses.set(account, passesOf(account) + 1);
      track(dispatchNotified(ids, accounts));
    }
    if (sweepDue && !sweeping) {
      sweepDue = false;
      sweeping = true;
      track(sweep());
    }
  }

  async function listen(): Promise<void> {
    const client = new pg.Client({ connectionString: options.config.databaseUrl, keepAlive: true });
    listener = client;
    client.on('notification', (message) => {
      if (message.payload) notified.addPayload(message.payload);
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
    wake() {
      if (wakeTimer || stopped) return;
      wakeTimer = setTimeout(() => {
        wakeTimer = undefined;
        sweepDue = true;
        kick();
      }, MIN_DUE_WAIT_MS);
      wakeTimer.unref();
    },
    async stop() {
      stopped = true;
      clearTimeout(sweepTimer);
      clearTimeout(wakeTimer);
      clearTimeout(reconnectTimer);
      const client = listener;
      listener = null;
      if (client) {
        client.removeAllListeners('end');
        await client.end().catch(() => undefined);
      }
      // A pass that ends now kicks nothing (stopped); wait until none is left.
      for (let rounds = 0; passes.size > 0 && rounds < 1_000; rounds++) await Promise.allSettled([...passes]);
      resolveReady();
    },
  };
}
