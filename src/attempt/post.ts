import type { AttemptResult, SignAndPostInput } from '../core/delivery-contract';
import { USER_AGENT } from '../core/delivery-policy';
import { signatureHeader, standardSignatureHeader } from '../core/signing';
import { deprecationHeaders } from '../core/versions/deprecation';
import { postWebhook } from '../infra/http-client';
import { observeAttempt } from '../infra/metrics';
import { tracePost } from '../infra/tracing';
import type { EndpointForDelivery } from './context';
import type { AttemptDeps } from './deps';

function deliveryHeaders(
  input: SignAndPostInput,
  body: string,
  secrets: string[],
  apiVersion: string,
): Record<string, string> {
  // A fresh t on every attempt: receivers reject signatures older than 300 s.
  const t = Math.floor(Date.now() / 1000);
  return {
    ...deprecationHeaders(apiVersion),
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    'service-signature': signatureHeader(body, secrets, t),
    'service-event': input.eventType,
    'service-delivery': input.attemptId,
    // Standard Webhooks beside ours: the event id, the same on every attempt, and the same t.
    'webhook-id': input.eventId,
    'webhook-timestamp': String(t),
    'webhook-signature': standardSignatureHeader(input.eventId, body, secrets, t),
    // The version the body is rendered in: the endpoint's pinned one, whose bytes the signature covers.
    'service-version': apiVersion,
  };
}

/** One spelling per name, so ours (lower case) replace theirs rather than go beside them. */
const lowerCased = (headers: Record<string, string>) =>
  Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));

/** Signs and posts the body once (rendered in the delivery's version, attempt/context.ts); never throws for anything the endpoint or the network does. */
export async function postAttempt(
  deps: AttemptDeps,
  input: SignAndPostInput,
  endpoint: EndpointForDelivery,
  body: string,
  traceParent: string | null = null,
): Promise<AttemptResult> {
  // In the publish's trace: the receiver's server continues it from the traceparent header.
  const attributes = {
    'parcel.event.id': input.eventId,
    'parcel.endpoint.id': input.endpointId,
    'parcel.attempt': input.attempt,
  };
  const result = await tracePost(traceParent, endpoint.url, attributes, (traceparent) =>
    postWebhook(deps.http, {
      url: endpoint.url,
      body,
      // The merchant's own headers first: none may stand for ours (domain/endpoint-headers.ts refuses those names).
      headers: {
        ...lowerCased(endpoint.headers),
        ...deliveryHeaders(input, body, endpoint.secrets, endpoint.apiVersion),
        traceparent,
      },
      timeoutMs: input.timeoutMs,
      allowPrivate: deps.config.webhook.allowPrivateTargets,
      pinnedCertificate: endpoint.localCertificate ?? undefined,
    }),
  );
  observeAttempt(result);
  return result;
}
