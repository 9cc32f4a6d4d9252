import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { verifySignature } from '../receiver/index';
import type { SessionCertificate } from '../infra/session-certificate';

/**
 * `listen`'s receiver: HTTPS on 127.0.0.1 with the session's certificate. Each delivery is verified with the
 * receiver kit merchants use, optionally forwarded (same method, bytes and headers) to the developer's own
 * server, whose status then answers the engine, so a failing local app sees the usual retries.
 */

export interface ReceivedDelivery {
  eventId: string | null;
  eventType: string | null;
  /** The parcel the event is about and its number in that parcel's order; null for an event without them. */
  parcelId: string | null;
  sequence: number | null;
  attemptId: string | null;
  signatureVerified: boolean;
  /** The forward target's status, or null when nothing was forwarded or it did not answer. */
  forwardedStatus: number | null;
  forwardError: string | null;
}

export interface LocalReceiver {
  url: string;
  close(): Promise<void>;
}

/** Headers the engine sends, forwarded as they came. */
const FORWARDED_HEADERS = [
  'content-type',
  'user-agent',
  'service-signature',
  'service-event',
  'service-delivery',
  'service-version',
];
const FORWARD_TIMEOUT_MS = 9_000; // under the engine's default 10 s, so the engine hears our answer

async function forward(
  target: string,
  body: Buffer,
  headers: Record<string, string>,
): Promise<{ status: number | null; error: string | null; text: string }> {
  try {
    const response = await fetch(target, {
      method: 'POST',
      body,
      headers,
      redirect: 'manual',
      signal: AbortSignal.timeout(FORWARD_TIMEOUT_MS),
    });
    const text = (await response.text()).slice(0, 500);
    return { status: response.status, error: null, text };
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause?.code;
    return { status: null, error: cause ?? (err as Error).name, text: '' };
  }
}

interface EventIdentity {
  id: string | null;
  type: string | null;
  parcelId: string | null;
  sequence: number | null;
}

function eventIdentity(body: Buffer): EventIdentity {
  try {
    const event = JSON.parse(body.toString('utf8')) as {
      id?: unknown;
      type?: unknown;
      sequence?: unknown;
      data?: { parcel?: { id?: unknown } };
    };
    const parcelId = event.data?.parcel?.id;
    return {
      id: typeof event.id === 'string' ? event.id : null,
      type: typeof event.type === 'string' ? event.type : null,
      parcelId: typeof parcelId === 'string' ? parcelId : null,
      sequence: typeof event.sequence === 'number' ? event.sequence : null,
    };
  } catch {
    return { id: null, type: null, parcelId: null, sequence: null };
  }
}

export async function startLocalReceiver(options: {
  certificate: SessionCertificate;
  /** The endpoint's signing secret, known once it is registered (after the server listens). */
  secret: () => string | undefined;
  forwardTo?: string;
  onDelivery: (delivery: ReceivedDelivery) => void;
}): Promise<LocalReceiver> {
  const server = https.createServer({ cert: options.certificate.cert, key: options.certificate.key }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      void (async () => {
        const body = Buffer.concat(chunks);
        const secret = options.secret();
        let verified: boolean;
        try {
          verified = secret !== undefined && Boolean(verifySignature(body, req.headers['service-signature'], secret));
        } catch {
          verified = false;
        }
        const headers: Record<string, string> = {};
        for (const name of FORWARDED_HEADERS) {
          const value = req.headers[name];
          if (typeof value === 'string') headers[name] = value;
        }
        let status = verified ? 200 : 400;
        let text = verified ? 'ok' : 'signature not verified';
        let forwarded: Awaited<ReturnType<typeof forward>> | undefined;
        if (options.forwardTo && verified) {
          forwarded = await forward(options.forwardTo, body, headers);
          status = forwarded.status ?? 502;
          text = forwarded.text;
        }
        res.writeHead(status, { 'content-type': 'text/plain' }).end(text);
        const { id, type, parcelId, sequence } = eventIdentity(body);
        options.onDelivery({
          eventId: id,
          eventType: type,
          parcelId,
          sequence,
          attemptId: headers['service-delivery'] ?? null,
          signatureVerified: verified,
          forwardedStatus: forwarded?.status ?? null,
          forwardError: forwarded?.error ?? null,
        });
      })();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${port}/`,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
