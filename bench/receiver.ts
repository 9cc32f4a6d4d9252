import { readFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';

// Files, not imports: bench/ reads the test CA and certificate but never imports test code.
export const TLS_DIR = path.join(__dirname, '..', 'test', 'fixtures', 'tls');

export interface ReceiverBehaviour {
  /** Status to answer; changed at run time to make an endpoint fail and recover. */
  status: number;
  /** Delay before answering, ms. */
  delayMs: number;
}

/**
 * An HTTPS receiver that notes when each (path, event id) first arrived, lets callers wait for one, and counts
 * requests per second so a scenario can read the peak rate an endpoint was sent.
 */
export interface Receiver {
  origin: string;
  url(pathname?: string): string;
  behaviour: ReceiverBehaviour;
  /** First arrival (performance.now()) of an event id at a path. */
  arrivalOf(eventId: string, pathname?: string): number | undefined;
  waitFor(eventId: string, pathname?: string): Promise<number>;
  requests: number;
  /** Requests received but not yet answered, and the most there ever were at once. */
  inFlight: number;
  inFlightPeak: number;
  /** Requests per whole second of performance.now(), for peak rates. */
  perSecond: Map<number, number>;
  close(): Promise<void>;
}

const key = (pathname: string, eventId: string) => `${pathname} ${eventId}`;

export async function startReceiver(behaviour: Partial<ReceiverBehaviour> = {}): Promise<Receiver> {
  const state: ReceiverBehaviour = { status: 200, delayMs: 0, ...behaviour };
  const arrivals = new Map<string, number>();
  const waiters = new Map<string, Array<(at: number) => void>>();
  const perSecond = new Map<number, number>();
  const receiver = { requests: 0, inFlight: 0, inFlightPeak: 0 };
  const server = https.createServer(
    { cert: readFileSync(path.join(TLS_DIR, 'server.pem')), key: readFileSync(path.join(TLS_DIR, 'server-key.pem')) },
    (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const now = performance.now();
        receiver.requests += 1;
        const second = Math.floor(now / 1000);
        perSecond.set(second, (perSecond.get(second) ?? 0) + 1);
        const status = state.status;
        receiver.inFlight += 1;
        receiver.inFlightPeak = Math.max(receiver.inFlightPeak, receiver.inFlight);
        const answer = () => {
          receiver.inFlight -= 1;
          res.writeHead(status, { 'content-type': 'application/json' }).end('{"received":true}');
        };
        if (state.delayMs > 0) setTimeout(answer, state.delayMs);
        else answer();
        // Only a delivered (2xx) request is an arrival; a failed attempt is not one.
        if (status < 200 || status > 299) return;
        const id = /"id":"(evt_[^"]+)"/.exec(Buffer.concat(chunks).toString())?.[1];
        if (!id) return;
        const k = key((req.url ?? '/').split('?')[0] as string, id);
        if (arrivals.has(k)) return;
        arrivals.set(k, now);
        for (const resolve of waiters.get(k) ?? []) resolve(now);
        waiters.delete(k);
      });
    },
  );
  server.keepAliveTimeout = 30_000;
  server.maxConnections = 10_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', 1024, resolve));
  const { port } = server.address() as AddressInfo;
  const origin = `https://127.0.0.1:${port}`;
  return {
    origin,
    url: (pathname = '/hooks') => `${origin}${pathname}`,
    behaviour: state,
    arrivalOf: (eventId, pathname = '/hooks') => arrivals.get(key(pathname, eventId)),
    waitFor(eventId, pathname = '/hooks') {
      const k = key(pathname, eventId);
      const at = arrivals.get(k);
      if (at !== undefined) return Promise.resolve(at);
      return new Promise((resolve) => waiters.set(k, [...(waiters.get(k) ?? []), resolve]));
    },
    get requests() {
      return receiver.requests;
    },
    get inFlight() {
      return receiver.inFlight;
    },
    get inFlightPeak() {
      return receiver.inFlightPeak;
    },
    perSecond,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The highest number of requests seen in any one second from `fromMs` on (performance.now() time). */
export function peakRate(receiver: Receiver, fromMs = 0): number {
  let peak = 0;
  for (const [second, count] of receiver.perSecond) if (second * 1000 >= fromMs - 1000) peak = Math.max(peak, count);
  return peak;
}
