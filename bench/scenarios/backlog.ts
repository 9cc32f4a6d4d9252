import { startEngine, within, type BenchContext, type EngineVariant } from '../engine';
import { peakRate, startReceiver } from '../receiver';
import { runPool } from '../stats';

export interface BacklogResult {
  events: number;
  /** The first retry's delay: every event waits this long in a durable timer after its failed first attempt. */
  firstRetryDelaySeconds: number;
  publishSeconds: number;
  workerRssMb: { start: number; backlogBuilt: number; end: number };
  maxCachedWorkflows: number | undefined;
  /** From the endpoint's recovery until the last event arrived. */
  recoveredToAllDeliveredSeconds: number;
  /** The most requests the recovered endpoint received in one second, and the mean over the drain. */
  receiverPeakPerSecond: number;
  receiverMeanPerSecond: number;
}

const rssMb = () => Math.round(process.memoryUsage().rss / 2 ** 20);

/**
 * `events` events to one endpoint that answers 500: every first attempt fails and the event waits in backoff.
 * Once all of them wait, the endpoint recovers; the retries deliver them. The worker's memory must stay flat
 * (its cache is bounded, the waiting workflows live on the server) and the endpoint's peak rate is reported.
 */
export async function backlogScenario(ctx: BenchContext, events: number, concurrency: number, variant: EngineVariant): Promise<BacklogResult> {
  // Long enough that publishing (about 40-80 events/s on 2 cores) ends before the first timers fire.
  const firstRetryDelaySeconds = Math.max(30, Math.ceil(events / 40));
  const receiver = await startReceiver({ status: 500 });
  const engine = await startEngine(ctx, {
    ...variant,
    env: { ...variant.env, DELIVERY_RETRY_DELAYS: `${firstRetryDelaySeconds}s,30s,30s,30s,1m,1m` },
  });
  try {
    const accountId = await engine.addAccount([receiver.url()]);
    const tag = accountId.slice(-8);
    const start = rssMb();
    const t0 = performance.now();
    await runPool(events, concurrency, (i) => engine.publish(accountId, `evt_backlog_${tag}_${i}`));
    // Every first attempt has failed once the receiver has answered that many requests.
    await within(
      (async () => {
        while (receiver.requests < events) await new Promise((resolve) => setTimeout(resolve, 200));
      })(),
      events * 100 + 60_000,
      'first attempts of the backlog',
    );
    const publishSeconds = (performance.now() - t0) / 1000;
    const backlogBuilt = rssMb();
    receiver.behaviour.status = 200;
    const recovered = performance.now();
    const arrivals = await within(
      Promise.all(Array.from({ length: events }, (_, i) => receiver.waitFor(`evt_backlog_${tag}_${i}`))),
      (firstRetryDelaySeconds + 600) * 1000 + events * 100,
      'delivery of the backlog',
    );
    const drainSeconds = (Math.max(...arrivals) - recovered) / 1000;
    const firstRetry = Math.min(...arrivals);
    return {
      events,
      firstRetryDelaySeconds,
      publishSeconds: Math.round(publishSeconds * 10) / 10,
      workerRssMb: { start, backlogBuilt, end: rssMb() },
      maxCachedWorkflows: engine.worker.options.maxCachedWorkflows,
      recoveredToAllDeliveredSeconds: Math.round(drainSeconds * 10) / 10,
      receiverPeakPerSecond: peakRate(receiver, recovered),
      receiverMeanPerSecond: Math.round((events / ((Math.max(...arrivals) - firstRetry) / 1000)) * 10) / 10,
    };
  } finally {
    await engine.stop();
    await receiver.close();
  }
}
