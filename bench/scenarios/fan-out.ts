import { startEngine, within, type BenchContext, type EngineVariant } from '../engine';
import type { Receiver } from '../receiver';
import { spread, type Spread } from '../stats';

export interface FanOutResult {
  endpoints: number;
  /** Publish until every endpoint had its first (successful) attempt. */
  allFirstAttemptsMs: Spread;
  /** Publish until the first endpoint had it. */
  firstArrivalMs: Spread;
  historyEvents: number;
  historyBytes: number;
}

/** One event to `endpoints` endpoints of one account, `reps` times: how long until every first attempt. */
export async function fanOutScenario(
  ctx: BenchContext,
  receiver: Receiver,
  endpoints: number,
  reps: number,
  variant: EngineVariant,
): Promise<FanOutResult> {
  const engine = await startEngine(ctx, variant);
  try {
    const paths = Array.from({ length: endpoints }, (_, n) => `/fan/${n}`);
    const accountId = await engine.addAccount(paths.map((p) => receiver.url(p)));
    const all: number[] = [];
    const first: number[] = [];
    let lastEventId = '';
    for (let rep = 0; rep < reps; rep++) {
      const eventId = `evt_fan_${accountId.slice(-8)}_${rep}`;
      const t0 = performance.now();
      await engine.publish(accountId, eventId);
      const arrivals = await within(
        Promise.all(paths.map((p) => receiver.waitFor(eventId, p))),
        300_000,
        `fan-out of ${eventId}`,
      );
      await engine.completed(eventId);
      all.push(Math.max(...arrivals) - t0);
      first.push(Math.min(...arrivals) - t0);
      lastEventId = eventId;
    }
    const history = await ctx.client.workflow.getHandle(`event:${lastEventId}`).fetchHistory();
    return {
      endpoints,
      allFirstAttemptsMs: spread(all),
      firstArrivalMs: spread(first),
      historyEvents: history.events?.length ?? 0,
      historyBytes: Buffer.byteLength(JSON.stringify(history)),
    };
  } finally {
    await engine.stop();
  }
}
