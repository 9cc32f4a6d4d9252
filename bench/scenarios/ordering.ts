import { readFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { newId } from '../../src/core/ids';
import { publishEvent } from '../../src/domain/events';
import { SECRET, startEngine, within, type BenchContext, type Engine, type EngineVariant } from '../engine';
import { TLS_DIR } from '../receiver';
import { percentile } from '../stats';
import { exampleEvent } from '../../src/core/event-schemas';

export interface OrderingResult {
  parcels: number;
  eventsPerParcel: number;
  /** Deliveries per second from the first publish to the last arrival, to an endpoint with ordering 'parcel'. */
  orderedPerSecond: number;
  /** The same traffic to an endpoint with ordering 'none', in the same run. */
  unorderedPerSecond: number;
  /** Arrivals at the ordered endpoint with a lower sequence after a higher one of the same parcel: must be 0. */
  inversions: number;
  /** The same count at the unordered endpoint, for contrast (nothing holds its events back). */
  unorderedInversions: number;
  /** Ordered endpoint: from the answer to event n of a parcel to the arrival of event n+1, when n+1 waited for it. */
  headOfLineWaitMs: { p50: number; p99: number; samples: number };
}

interface Arrival {
  parcel: string;
  sequence: number;
  /** performance.now() when the request ended, and when it was answered. */
  at: number;
  answeredAt: number;
}

/** A receiver that answers 200 and keeps every arrival's parcel and sequence in order. */
async function startSequenceReceiver(): Promise<{ url: string; arrivals: Arrival[]; close(): Promise<void> }> {
  const arrivals: Arrival[] = [];
  const server = https.createServer(
    { cert: readFileSync(path.join(TLS_DIR, 'server.pem')), key: readFileSync(path.join(TLS_DIR, 'server-key.pem')) },
    (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const at = performance.now();
        const body = JSON.parse(Buffer.concat(chunks).toString()) as {
          sequence?: number;
          data?: { parcel?: { id?: string } };
        };
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"received":true}');
        arrivals.push({
          parcel: body.data?.parcel?.id ?? '',
          sequence: body.sequence ?? 0,
          at,
          answeredAt: performance.now(),
        });
      });
    },
  );
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', 1024, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${port}/hooks`,
    arrivals,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Arrivals whose sequence is below one already seen for the same parcel. */
export function countInversions(arrivals: readonly Pick<Arrival, 'parcel' | 'sequence'>[]): number {
  const highest = new Map<string, number>();
  let inversions = 0;
  for (const { parcel, sequence } of arrivals) {
    const seen = highest.get(parcel) ?? 0;
    if (sequence < seen) inversions += 1;
    else highest.set(parcel, sequence);
  }
  return inversions;
}

/** Event n+1's arrival minus event n's answer, for every successor that arrived after its predecessor's answer. */
function headOfLineWaits(arrivals: readonly Arrival[]): number[] {
  const answered = new Map(arrivals.map((a) => [`${a.parcel} ${a.sequence}`, a.answeredAt]));
  return arrivals.flatMap((a) => {
    const before = answered.get(`${a.parcel} ${a.sequence - 1}`);
    return before !== undefined && a.at >= before ? [a.at - before] : [];
  });
}

/** One account, one endpoint with this ordering; every parcel's events published in order, parcels side by side. */
async function phase(
  ctx: BenchContext,
  engine: Engine,
  ordering: 'none' | 'parcel',
  parcels: number,
  perParcel: number,
) {
  const receiver = await startSequenceReceiver();
  try {
    const accountId = newId('account');
    await ctx.pool.query(`INSERT INTO accounts (id, name, status) VALUES ($1, 'Bench ordering', 'active')`, [
      accountId,
    ]);
    await ctx.pool.query(
      `INSERT INTO webhook_endpoints (id, account_id, livemode, url, secret, ordering) VALUES ($1, $2, false, $3, $4, $5)`,
      [newId('endpoint'), accountId, receiver.url, SECRET, ordering],
    );
    const total = parcels * perParcel;
    const began = performance.now();
    await Promise.all(
      Array.from({ length: parcels }, async (_, p) => {
        for (let n = 0; n < perParcel; n++) {
          const data = { parcel: { ...exampleEvent('parcel.in_transit').data.parcel, id: `p_${ordering}_${p}` } };
          await publishEvent({ pool: ctx.pool }, { accountId, livemode: false, type: 'parcel.in_transit', data });
        }
      }),
    );
    await within(
      (async () => {
        while (receiver.arrivals.length < total) await new Promise((resolve) => setTimeout(resolve, 20));
      })(),
      total * 1_000 + 60_000,
      `${ordering} deliveries of the ordering scenario`,
    );
    const last = Math.max(...receiver.arrivals.map((a) => a.at));
    return { perSecond: Math.round((total / ((last - began) / 1000)) * 10) / 10, arrivals: [...receiver.arrivals] };
  } finally {
    await receiver.close();
  }
}

/**
 * `parcels` parcels of `perParcel` events each, published as a merchant would (a parcel's events one after the
 * other, parcels at the same time), once to an unordered endpoint and once to an ordered one, in the same run
 * and engine. Every receiver answers at once, so the ordered endpoint's cost is the wait itself: the lane check
 * before attempt 1, the predecessor's signal and the successor's wake-up.
 */
export async function orderingScenario(
  ctx: BenchContext,
  variant: EngineVariant,
  parcels = 20,
  perParcel = 5,
): Promise<OrderingResult> {
  const engine = await startEngine(ctx, variant);
  try {
    const unordered = await phase(ctx, engine, 'none', parcels, perParcel);
    const ordered = await phase(ctx, engine, 'parcel', parcels, perParcel);
    const waits = headOfLineWaits(ordered.arrivals).sort((a, b) => a - b);
    const round = (ms: number) => Math.round(ms * 10) / 10;
    return {
      parcels,
      eventsPerParcel: perParcel,
      orderedPerSecond: ordered.perSecond,
      unorderedPerSecond: unordered.perSecond,
      inversions: countInversions(ordered.arrivals),
      unorderedInversions: countInversions(unordered.arrivals),
      headOfLineWaitMs: { p50: round(percentile(waits, 50)), p99: round(percentile(waits, 99)), samples: waits.length },
    };
  } finally {
    await engine.stop();
  }
}
