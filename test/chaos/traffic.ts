import type { Rng } from './rng';
import { log, sleep } from './runtime';
import { EVENT_TYPES, PARCEL_STATUS_BY_EVENT, type EventType } from './wiring';

/**
 * The parcel system: publishes each event through POST /internal/v1/events with its own id, and, being well
 * behaved, retries the same id on 5xx, 429, a timeout or a connection error until it gets a 2xx (bounded).
 * Every answer that is not a 2xx is kept. With several API processes, as behind a round-robin load balancer,
 * event i's first call goes to API i (mod their number) and each retry to the next one.
 */

export interface PlannedEvent {
  id: string;
  type: EventType;
  /** When to publish, in ms after the traffic starts. */
  offsetMs: number;
  data: Record<string, unknown>;
}

export interface PublishCall {
  startedAt: number;
  endedAt: number;
  /** HTTP status, or what happened instead of an answer. */
  outcome: number | 'timeout' | 'connection_error';
  /** error.code of the body, or the client error's message. */
  code?: string;
  /** The answer said when to try again (Retry-After): a clear "not now" rather than a failure. */
  retryAfter?: boolean;
}

export interface PublishResult {
  event: PlannedEvent;
  /** First 2xx: the event is durably accepted. */
  acceptedAt?: number;
  calls: PublishCall[];
  /** Why the caller stopped without a 2xx. */
  gaveUp?: string;
}

export const PUBLISH_TIMEOUT_MS = 10_000;
/** A caller keeps retrying one event for this long before giving up on it. */
export const PUBLISH_RETRY_BUDGET_MS = 120_000;

interface PlannedParcel {
  id: string;
  number: string;
}

/** About this many events per parcel: an ordered endpoint then sees each parcel's events queue behind each other. */
const EVENTS_PER_PARCEL = 5;

function eventData(rng: Rng, type: EventType, nowSeconds: number, parcel: PlannedParcel): Record<string, unknown> {
  const parcelId = parcel.id;
  const parcelNumber = parcel.number;
  if (type === 'cod.settled') {
    return {
      parcel: { id: parcelId, parcel_number: parcelNumber },
      cod_settlement: {
        id: `cod_${rng.hex(16)}`,
        amount: rng.int(100, 50_000),
        currency: 'KES',
        settled_at: nowSeconds,
      },
    };
  }
  return {
    parcel: {
      id: parcelId,
      parcel_number: parcelNumber,
      tracking_number: `TRK${rng.hex(10).toUpperCase()}`,
      status: PARCEL_STATUS_BY_EVENT[type],
      payment_status: rng.pick(['PAID', 'PENDING', 'COD']),
      total_fee: rng.int(150, 2_500),
      currency: 'KES',
      description: rng.pick(['Two cotton shirts', 'Solar lamp', 'Maize flour 2 kg']),
      package_size: rng.pick(['SMALL', 'MEDIUM', 'LARGE']),
      recipient_name: rng.pick(['Achieng Otieno', 'Wanjiru Kamau', 'Kiptoo Ruto', 'Amina Hassan', 'Baraka Mwangi']),
      pickup_run_id: `run_${rng.hex(16)}`,
    },
  };
}

/** `count` events spread evenly (with seeded jitter) over `spanMs`. */
export function planEvents(rng: Rng, seed: number, count: number, spanMs: number): PlannedEvent[] {
  const step = spanMs / count;
  const nowSeconds = Math.floor(Date.now() / 1000);
  const parcels: PlannedParcel[] = Array.from({ length: Math.max(1, Math.ceil(count / EVENTS_PER_PARCEL)) }, () => ({
    id: `pcl_${rng.hex(16)}`,
    number: `PN${rng.int(100000, 999999)}`,
  }));
  return Array.from({ length: count }, (_, i) => {
    const type = rng.pick(EVENT_TYPES);
    return {
      id: `evt_chaos${seed}_${String(i).padStart(4, '0')}`,
      type,
      offsetMs: Math.round(i * step + rng.next() * step * 0.8),
      data: eventData(rng, type, nowSeconds, rng.pick(parcels)),
    };
  });
}

const retryable = (outcome: PublishCall['outcome']) =>
  typeof outcome !== 'number' || outcome >= 500 || outcome === 429 || outcome === 408;

async function publishOnce(apiUrl: string, token: string, body: string): Promise<PublishCall> {
  const startedAt = Date.now();
  try {
    const res = await fetch(`${apiUrl}/internal/v1/events`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body,
      signal: AbortSignal.timeout(PUBLISH_TIMEOUT_MS),
    });
    const text = await res.text();
    let code: string | undefined;
    if (!res.ok) {
      try {
        code = (JSON.parse(text) as { error?: { code?: string } }).error?.code;
      } catch {
        code = text.slice(0, 80);
      }
    }
    return {
      startedAt,
      endedAt: Date.now(),
      outcome: res.status,
      code,
      ...(res.headers.has('retry-after') ? { retryAfter: true } : {}),
    };
  } catch (err) {
    const e = err as Error & { cause?: { code?: string } };
    const timeout = e.name === 'TimeoutError' || e.name === 'AbortError';
    if (timeout) return { startedAt, endedAt: Date.now(), outcome: 'timeout' };
    return { startedAt, endedAt: Date.now(), outcome: 'connection_error', code: e.cause?.code ?? e.message };
  }
}

/** Which API process call `n` (1, 2, ...) of the `index`th event goes to. */
export function apiFor(apiUrls: readonly string[], index: number, n: number): string {
  const url = apiUrls[(index + n - 1) % apiUrls.length];
  if (url === undefined) throw new Error('no API to publish through');
  return url;
}

/** Fills `result` as calls are made, so progress can be read while it runs. */
async function publish(
  apiUrls: readonly string[],
  index: number,
  token: string,
  accountId: string,
  result: PublishResult,
): Promise<void> {
  const { event } = result;
  const body = JSON.stringify({
    id: event.id,
    account_id: accountId,
    livemode: false,
    type: event.type,
    data: event.data,
  });
  const giveUpAt = Date.now() + PUBLISH_RETRY_BUDGET_MS;
  for (let n = 1; ; n++) {
    const call = await publishOnce(apiFor(apiUrls, index, n), token, body);
    if (typeof call.outcome === 'number' && call.outcome >= 200 && call.outcome < 300) {
      result.acceptedAt = call.endedAt;
      return;
    }
    result.calls.push(call);
    if (!retryable(call.outcome)) {
      result.gaveUp = `${call.outcome} ${call.code ?? ''} is not worth retrying`;
      return;
    }
    if (Date.now() > giveUpAt) {
      result.gaveUp = `no 2xx within ${PUBLISH_RETRY_BUDGET_MS / 1000} s (${n} calls)`;
      return;
    }
    await sleep(Math.min(500 * 2 ** (n - 1), 5_000));
  }
}

/** Publishes every planned event at its time; resolves when each one is accepted or given up. */
export async function runTraffic(options: {
  apiUrls: string[];
  token: string;
  accountId: string;
  events: PlannedEvent[];
}): Promise<PublishResult[]> {
  const startedAt = Date.now();
  const results: PublishResult[] = options.events.map((event) => ({ event, calls: [] }));
  let settled = 0;
  const progress = setInterval(() => {
    const accepted = results.filter((r) => r.acceptedAt !== undefined).length;
    const retrying = results.filter((r) => r.calls.length > 0 && r.acceptedAt === undefined && !r.gaveUp).length;
    log(`traffic: ${accepted}/${options.events.length} accepted, ${retrying} retrying, ${settled} done`);
  }, 15_000);
  try {
    await Promise.all(
      results.map(async (result, index) => {
        await sleep(Math.max(0, startedAt + result.event.offsetMs - Date.now()));
        await publish(options.apiUrls, index, options.token, options.accountId, result);
        settled += 1;
      }),
    );
  } finally {
    clearInterval(progress);
  }
  return results;
}
