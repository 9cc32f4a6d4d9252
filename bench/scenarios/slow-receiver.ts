import { startEngine, within, type BenchContext, type EngineVariant } from '../engine';
import { runOpenLoop } from '../open-loop';
import { startReceiver } from '../receiver';
import { summarize, type Summary } from '../stats';

export interface SlowReceiverResult {
  ratePerSecond: number;
  slowAnswerMs: number;
  /** The fast endpoint's publish-to-arrival with no slow neighbour, then beside one, at the same rate. */
  fastAlone: Summary;
  fastBesideSlow: Summary;
  /** Slow requests open at once at the peak: each holds a worker slot for its whole 9 s. */
  slowInFlightPeak: number;
}

const SLOW_MS = 9_000;

/** Publishes at a fixed rate (open loop) for `ms`, returning each event's publish-to-arrival time. */
async function openLoop(ms: number, rate: number, send: (i: number) => Promise<number | undefined>): Promise<number[]> {
  const latencies: Array<Promise<number | undefined>> = [];
  await runOpenLoop({ ratePerSecond: rate, durationMs: ms }, (i) => latencies.push(send(i)));
  return (await Promise.all(latencies)).filter((l): l is number => l !== undefined);
}

/**
 * Two merchants on two origins: one answers every request after 9 s, the other at once. The fast merchant's
 * latency is measured alone, then with the slow merchant receiving the same rate beside it.
 */
export async function slowReceiverScenario(
  ctx: BenchContext,
  windowMs: number,
  rate: number,
  variant: EngineVariant,
): Promise<SlowReceiverResult> {
  const fast = await startReceiver();
  const slow = await startReceiver({ delayMs: SLOW_MS });
  const engine = await startEngine(ctx, variant);
  try {
    const fastAccount = await engine.addAccount([fast.url()]);
    const slowAccount = await engine.addAccount([slow.url()]);
    const fastEvent = (phase: string) => async (i: number) => {
      const id = `evt_fast_${phase}_${fastAccount.slice(-8)}_${i}`;
      const t0 = performance.now();
      await engine.publish(fastAccount, id);
      return (await within(fast.waitFor(id), 120_000, id)) - t0;
    };
    const alone = await openLoop(windowMs, rate, fastEvent('alone'));
    const slowSends: Array<Promise<unknown>> = [];
    const beside = await openLoop(windowMs, rate, async (i) => {
      const id = `evt_slow_${slowAccount.slice(-8)}_${i}`;
      slowSends.push(engine.publish(slowAccount, id).then(() => within(slow.waitFor(id), 120_000, id)));
      return fastEvent('beside')(i);
    });
    await Promise.all(slowSends);
    return {
      ratePerSecond: rate,
      slowAnswerMs: SLOW_MS,
      fastAlone: summarize(alone.length, windowMs, alone),
      fastBesideSlow: summarize(beside.length, windowMs, beside),
      slowInFlightPeak: slow.inFlightPeak,
    };
  } finally {
    await engine.stop();
    await fast.close();
    await slow.close();
  }
}
