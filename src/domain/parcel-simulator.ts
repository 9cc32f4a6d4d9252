import { randomUUID } from 'node:crypto';
import { PARCEL_STATUS_BY_EVENT, type EventType } from '../core/event-catalog';
import { publishEvent, type PublishDeps } from './events';

/**
 * Drives parcels through a realistic lifecycle and publishes each stage through publishEvent, so
 * merchants and operators can watch deliveries without the parcel system: created -> awaiting_dropoff ->
 * in_transit -> at_pickup_station -> delivered or returned, some cancelled early, cod.settled after a COD
 * parcel is delivered. Shares of each path are here, named.
 */

const CANCELLED_SHARE = 0.1; // cancelled before drop-off
const RETURNED_SHARE = 0.15; // reached the station, never collected
const COD_SHARE = 0.4; // cash on delivery: PENDING until collected, then settled
const PARCELS_IN_FLIGHT = 4; // parcels simulated side by side; each parcel's events stay in order

const SIZES = [
  { code: 'S', fee: 250 },
  { code: 'M', fee: 350 },
  { code: 'L', fee: 550 },
] as const;
const DESCRIPTIONS = [
  'Two cotton shirts',
  'Phone case and charger',
  'Maize flour 2 kg',
  'School shoes, size 34',
  'Kitenge fabric 6 yards',
  'Solar lamp',
];
const RECIPIENTS = [
  'Amina Wanjiru',
  'Brian Otieno',
  'Grace Muthoni',
  'Kevin Kiprop',
  'Faith Achieng',
  'Daniel Mwangi',
  'Mercy Njeri',
];

export type Random = () => number;

/** Deterministic generator for a --seed (mulberry32), so a run can be repeated. */
export function seededRandom(seed: number): Random {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function pick<T>(random: Random, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)] as T;
}

function digits(random: Random, count: number): string {
  return Array.from({ length: count }, () => Math.floor(random() * 10)).join('');
}

interface SimulatedParcel {
  parcel: Record<string, unknown>;
  cod: boolean;
}

export function newParcel(random: Random): SimulatedParcel {
  const size = pick(random, SIZES);
  const cod = random() < COD_SHARE;
  return {
    cod,
    parcel: {
      id: randomUUID(),
      parcel_number: `PCL-${digits(random, 6)}`,
      tracking_number: `TRK${digits(random, 10)}KE`,
      status: PARCEL_STATUS_BY_EVENT['parcel.created'],
      payment_status: cod ? 'PENDING' : 'PAID',
      total_fee: size.fee,
      currency: 'KES',
      description: pick(random, DESCRIPTIONS),
      package_size: size.code,
      recipient_name: pick(random, RECIPIENTS),
      pickup_run_id: randomUUID(),
    },
  };
}

/** The event kinds one parcel goes through, in order. */
export function lifecycle(random: Random, cod: boolean): EventType[] {
  const path: EventType[] = ['parcel.created', 'parcel.awaiting_dropoff'];
  if (random() < CANCELLED_SHARE) return [...path, 'parcel.cancelled'];
  path.push('parcel.in_transit', 'parcel.at_pickup_station');
  if (random() < RETURNED_SHARE) return [...path, 'parcel.returned'];
  path.push('parcel.delivered');
  return cod ? [...path, 'cod.settled'] : path;
}

function eventData(type: EventType, sim: SimulatedParcel): Record<string, unknown> {
  const { parcel } = sim;
  if (type === 'cod.settled') {
    // A settlement is one of its parcel's events: numbered in its lane, after the delivery that collected the cash.
    return {
      parcel: { id: parcel.id, parcel_number: parcel.parcel_number },
      cod_settlement: {
        id: `cods_${randomUUID().replace(/-/g, '')}`,
        amount: parcel.total_fee,
        currency: parcel.currency,
        settled_at: Math.floor(Date.now() / 1000),
      },
    };
  }
  parcel.status = PARCEL_STATUS_BY_EVENT[type];
  // Cash is collected when the customer picks the parcel up.
  if (type === 'parcel.delivered') parcel.payment_status = 'PAID';
  return { parcel: { ...parcel } };
}

/**
 * Realistic data for one event of this kind, as a simulated parcel would carry it at that stage (test events,
 * POST /v1/webhooks/:id/test). A cod.settled belongs to a cash-on-delivery parcel.
 */
export function sampleEventData(type: EventType, random: Random = Math.random): Record<string, unknown> {
  const sim = newParcel(random);
  if (type === 'cod.settled') sim.cod = true;
  return eventData(type, sim);
}

export interface SimulationSummary {
  account_id: string;
  livemode: boolean;
  parcels: number;
  events: number;
  by_type: Record<string, number>;
  /** Events that reached at least one endpoint. */
  delivered_to_endpoints: number;
}

export async function simulateParcels(
  deps: PublishDeps,
  options: { accountId: string; livemode: boolean; parcels: number; random?: Random },
): Promise<SimulationSummary> {
  const random = options.random ?? Math.random;
  const summary: SimulationSummary = {
    account_id: options.accountId,
    livemode: options.livemode,
    parcels: options.parcels,
    events: 0,
    by_type: {},
    delivered_to_endpoints: 0,
  };
  // Generated up front so a seed gives the same parcels whatever order the publishing finishes in.
  const plans = Array.from({ length: options.parcels }, () => {
    const sim = newParcel(random);
    return { sim, stages: lifecycle(random, sim.cod) };
  });
  const runParcel = async (plan: (typeof plans)[number]) => {
    for (const type of plan.stages) {
      const published = await publishEvent(deps, {
        accountId: options.accountId,
        livemode: options.livemode,
        type,
        data: eventData(type, plan.sim),
      });
      summary.events += 1;
      summary.by_type[type] = (summary.by_type[type] ?? 0) + 1;
      if (published.endpointIds.length > 0) summary.delivered_to_endpoints += 1;
    }
  };
  let next = 0;
  const lane = async () => {
    for (let plan = plans[next++]; plan; plan = plans[next++]) await runParcel(plan);
  };
  await Promise.all(Array.from({ length: Math.min(PARCELS_IN_FLIGHT, plans.length) }, lane));
  return summary;
}
