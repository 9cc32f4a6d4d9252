import { buildServer } from '../../src/api/server';
import { parseForm } from '../../src/core/form-body';
import { engineConfig, type BenchContext } from '../engine';
import { percentile } from '../stats';

/** The API's body limit (src/api/server.ts). */
const LIMIT = 64 * 1024;
const SMALL = 1024;
const REPS = 21;

export interface BodyParsingResult {
  /** The form parser alone, its field cap lifted: ns per byte of one field repeated up to the limit, and of 1 KB. */
  limitNsPerByte: number;
  smallNsPerByte: number;
  /** limitNsPerByte over smallNsPerByte: about 1 when the parse is linear in the body, far above when it is not. */
  perByteVsSmall: number;
  /** The same bodies posted to the developers page through the app (refused at the field cap): ms, p50. */
  servedLimitMs: number;
  servedSmallMs: number;
  /** Per byte, the body at the limit served over the 1 KB one: at most 1 when its cost is the request's own. */
  servedPerByteVsSmall: number;
}

const round = (value: number, digits: number) => Math.round(value * 10 ** digits) / 10 ** digits;
const median = (values: number[]) =>
  percentile(
    [...values].sort((a, b) => a - b),
    50,
  );

async function timed(run: () => unknown): Promise<number> {
  const t0 = performance.now();
  await run();
  return performance.now() - t0;
}

async function medianMs(run: () => unknown): Promise<number> {
  for (let i = 0; i < 3; i++) await run(); // warm-up
  const times: number[] = [];
  for (let i = 0; i < REPS; i++) times.push(await timed(run));
  return median(times);
}

/**
 * A form of one field repeated (`a&a&...`) at the body limit and a 1 KB one: parsed by the page's form parser
 * with its field cap lifted (the parse's own cost, per byte), and posted unauthenticated to a developers page
 * path through the app in this process (the cost a request of either size puts on the event loop).
 */
export async function bodyParsingScenario(ctx: BenchContext): Promise<BodyParsingResult> {
  const limitBody = 'a&'.repeat(LIMIT / 2);
  const smallBody = 'a&'.repeat(SMALL / 2);
  const lifted = Number.POSITIVE_INFINITY;
  const limitMs = await medianMs(() => parseForm(limitBody, lifted));
  const smallMs = await medianMs(() => parseForm(smallBody, lifted));
  const limitNsPerByte = (limitMs * 1e6) / LIMIT;
  const smallNsPerByte = (smallMs * 1e6) / SMALL;

  const app = await buildServer(
    { config: engineConfig(ctx, `bench-body-parsing-${ctx.runId}`), pool: ctx.pool, temporal: ctx.client },
    { logger: false },
  );
  await app.ready();
  try {
    const post = (payload: string) => async () => {
      const response = await app.inject({
        method: 'POST',
        url: '/dashboard/test/endpoints',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload,
      });
      if (response.statusCode >= 500) throw new Error(`the page answered ${response.statusCode}`);
    };
    const servedLimitMs = await medianMs(post(limitBody));
    const servedSmallMs = await medianMs(post(smallBody));
    return {
      limitNsPerByte: round(limitNsPerByte, 2),
      smallNsPerByte: round(smallNsPerByte, 2),
      perByteVsSmall: round(limitNsPerByte / smallNsPerByte, 2),
      servedLimitMs: round(servedLimitMs, 2),
      servedSmallMs: round(servedSmallMs, 2),
      servedPerByteVsSmall: round(servedLimitMs / LIMIT / (servedSmallMs / SMALL), 3),
    };
  } finally {
    await app.close();
  }
}
