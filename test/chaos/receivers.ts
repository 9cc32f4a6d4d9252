import { createHmac, timingSafeEqual } from 'node:crypto';
import { decide } from './rng';
import { EVENT_TYPES, startReceiver, type ReceivedRequest, type Receiver, type Reply, type EventType } from './wiring';

/** How a merchant's endpoint behaves; every random answer is seeded per (endpoint, event, request number). */
export type Behaviour = 'ok' | 'flaky' | 'slow' | 'down';

export interface EndpointProfile {
  /** Also the receiver path: https://127.0.0.1:<port>/<name>. */
  name: string;
  behaviour: Behaviour;
  /** Kinds it subscribes to; 'all' registers without `events`. */
  events: readonly EventType[] | 'all';
  /** Registered with ordering 'parcel': the run counts its inversions, which must be zero. */
  ordering?: 'parcel';
  /** Registered with this rate_limit: the receiver must never see more requests in one clock second. */
  rateLimit?: number;
  /** Paused at registration and resumed this long into the traffic: nothing may arrive before the resume. */
  pausedForMs?: number;
}

/** The one kind only flaky-all takes (see PROFILES). */
const ONE_ENDPOINT_KIND: EventType = 'parcel.awaiting_dropoff';

/**
 * Narrow subscriptions keep the run bounded: an endpoint that always fails costs a whole ladder per event, so
 * it only takes cod.settled. parcel.awaiting_dropoff goes to flaky-all alone: those events are one-ladder
 * deliveries, so every fault also meets a one-ladder workflow (its local lane steps, its retries); every other
 * kind fans out.
 */
export const PROFILES: readonly EndpointProfile[] = [
  { name: 'ok-most', behaviour: 'ok', events: EVENT_TYPES.filter((type) => type !== ONE_ENDPOINT_KIND) },
  { name: 'ok-some', behaviour: 'ok', events: ['parcel.created', 'parcel.delivered', 'cod.settled'] },
  { name: 'flaky-all', behaviour: 'flaky', events: 'all' },
  {
    name: 'flaky-some',
    behaviour: 'flaky',
    events: ['parcel.in_transit', 'parcel.delivered', 'parcel.returned', 'cod.settled'],
  },
  {
    name: 'slow',
    behaviour: 'slow',
    events: ['parcel.created', 'parcel.at_pickup_station', 'parcel.delivered', 'parcel.cancelled'],
  },
  { name: 'down', behaviour: 'down', events: ['cod.settled'] },
  // Flaky, so a parcel's next event often waits for the retries of the one before it.
  {
    name: 'ordered',
    behaviour: 'flaky',
    events: EVENT_TYPES.filter((type) => type !== ONE_ENDPOINT_KIND && type !== 'cod.settled'),
    ordering: 'parcel',
  },
  // Bursts of these kinds exceed 2 per second: its deliveries wait their turn, and none may arrive early.
  {
    name: 'limited',
    behaviour: 'ok',
    events: ['parcel.created', 'parcel.in_transit', 'parcel.delivered'],
    rateLimit: 2,
  },
  // Paused before the first event and resumed mid-run: what it was sent meanwhile is held, then each event goes
  // out once, in parcel order.
  {
    name: 'paused',
    behaviour: 'ok',
    events: ['parcel.created', 'parcel.in_transit', 'parcel.delivered'],
    ordering: 'parcel',
    pausedForMs: 45_000,
  },
];

export const FLAKY_FAILURE_RATE = 0.3;
/** Share of the slow endpoint's answers that come after the engine's timeout. */
export const SLOW_LATE_RATE = 0.12;

export interface RegisteredEndpoint {
  profile: EndpointProfile;
  id: string;
  secret: string;
  url: string;
  /** A paused profile's: when the harness asked to resume it (ms); nothing may arrive before. */
  resumeAskedAt?: number;
}

export function subscribes(profile: EndpointProfile, type: string): boolean {
  return profile.events === 'all' || (profile.events as readonly string[]).includes(type);
}

/** One request as the receiver saw and answered it. */
export interface ReceivedDelivery {
  endpoint: string;
  receivedAt: number;
  eventId: string | null;
  /** Service-Event header. */
  eventType: string | null;
  /** Service-Delivery header: the attempt id the engine records (dlv_...). */
  deliveryId: string | null;
  /** 1-based: the how-manieth request for this event at this endpoint. */
  nth: number;
  status: number;
  delayMs: number;
  /** The answer was due before the engine's timeout (a late answer reaches nobody: the engine hung up). */
  inTime: boolean;
  /** 'ok', or why the signature did not verify. */
  signature: string;
  /** data.parcel.id and the event's `sequence`, when it has them. */
  parcelId: string | null;
  sequence: number | null;
}

const header = (request: ReceivedRequest, name: string): string | undefined => {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
};

/**
 * An independent check of the signature scheme, not the product's code: HMAC-SHA-256 with the
 * endpoint secret over `<t>.<raw body>`, hex, any of the v1 values, t within 300 s.
 */
export function verifySignature(
  rawBody: Buffer,
  signatureHeader: string | undefined,
  secret: string,
  nowMs: number,
): string {
  if (!signatureHeader) return 'no Service-Signature header';
  let t: string | undefined;
  const v1: string[] = [];
  for (const part of signatureHeader.split(',')) {
    const [key, value] = part.trim().split('=', 2);
    if (key === 't') t = value;
    else if (key === 'v1' && value) v1.push(value);
  }
  if (!t || !/^\d+$/.test(t) || v1.length === 0)
    return `malformed header ${JSON.stringify(signatureHeader.slice(0, 80))}`;
  if (Math.abs(nowMs / 1000 - Number(t)) > 300) return `t=${t} more than 300 s from the receiver's clock`;
  const expected = createHmac('sha256', secret).update(`${t}.`).update(rawBody).digest();
  const matches = v1.some((hex) => {
    const given = Buffer.from(hex, 'hex');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  return matches ? 'ok' : 'no v1 value matches the endpoint secret';
}

function eventOf(rawBody: Buffer): { eventId: string | null; parcelId: string | null; sequence: number | null } {
  try {
    const parsed = JSON.parse(rawBody.toString('utf8')) as {
      id?: unknown;
      sequence?: unknown;
      data?: { parcel?: { id?: unknown } };
    };
    return {
      eventId: typeof parsed.id === 'string' ? parsed.id : null,
      parcelId: typeof parsed.data?.parcel?.id === 'string' ? parsed.data.parcel.id : null,
      sequence: typeof parsed.sequence === 'number' ? parsed.sequence : null,
    };
  } catch {
    return { eventId: null, parcelId: null, sequence: null };
  }
}

export interface Receivers {
  url(profile: EndpointProfile): string;
  attach(endpoint: RegisteredEndpoint): void;
  readonly log: ReceivedDelivery[];
  close(): Promise<void>;
}

/** One HTTPS receiver (the test CA's certificate), one path per endpoint, every request logged. */
export async function startReceivers(seed: number, deliveryTimeoutMs: number): Promise<Receivers> {
  const receiver: Receiver = await startReceiver();
  const log: ReceivedDelivery[] = [];
  const counts = new Map<string, number>();

  function answer(profile: EndpointProfile, eventId: string, nth: number): Reply {
    const draw = decide(seed, 'receiver', profile.name, eventId, nth);
    switch (profile.behaviour) {
      case 'ok':
        return { status: 200 };
      case 'flaky':
        return draw < FLAKY_FAILURE_RATE ? { status: 500, body: 'flaky: failed on purpose' } : { status: 200 };
      case 'slow': {
        // Well inside the timeout (1-2.5 s), or well after it (timeout + 1-2 s): never a race at the edge.
        const late = draw < SLOW_LATE_RATE;
        const spread = decide(seed, 'receiver-delay', profile.name, eventId, nth);
        const delayMs = late
          ? deliveryTimeoutMs + 1_000 + Math.round(spread * 1_000)
          : 1_000 + Math.round(spread * 1_500);
        return { status: 200, delayMs };
      }
      case 'down':
        return { status: 503, body: 'down: always fails' };
    }
  }

  return {
    url: (profile) => `${receiver.url}/${profile.name}`,
    log,
    attach(endpoint) {
      const { profile } = endpoint;
      receiver.script(`/${profile.name}`, (_index, request) => {
        const { eventId, parcelId, sequence } = eventOf(request.rawBody);
        const key = `${profile.name}\u0000${eventId}`;
        const nth = (counts.get(key) ?? 0) + 1;
        counts.set(key, nth);
        const reply = answer(profile, eventId ?? 'unparseable', nth);
        const delayMs = reply.delayMs ?? 0;
        log.push({
          endpoint: profile.name,
          receivedAt: request.receivedAt,
          eventId,
          eventType: header(request, 'service-event') ?? null,
          deliveryId: header(request, 'service-delivery') ?? null,
          nth,
          status: reply.status ?? 200,
          delayMs,
          inTime: delayMs < deliveryTimeoutMs,
          signature:
            eventId === null
              ? 'body is not an event'
              : verifySignature(
                  request.rawBody,
                  header(request, 'service-signature'),
                  endpoint.secret,
                  request.receivedAt,
                ),
          parcelId,
          sequence,
        });
        return reply;
      });
    },
    close: () => receiver.close(),
  };
}
