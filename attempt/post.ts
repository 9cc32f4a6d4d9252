import type { AttemptResult, SignAndPostInput } from '../core/delivery-contract';
import { USER_AGENT } from '../core/delivery-policy';
import { signatureHeader } from '../core/signing';
import { deprecationHeaders } from '../core/versions/deprecation';
import { postWebhook } from '../infra/http-client';
import { observeAttempt } from '../infra/metrics';
import type { EndpointForDelivery } from './context';
import type { AttemptDeps } from './deps';

function deliveryHeaders(input: SignAndPostInput, body: string, secrets: string[], apiVersion: string): Record<string, string> {
  return {
    ...deprecationHeaders(apiVersion),
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    // A fresh t on every attempt: receivers reject signatures older than 300 s (spec 6.2, 8).
    'service-signature': signatureHeader(body, secrets, Math.floor(Date.now() / 1000)),
    'service-event': input.eventType,
    'service-delivery': input.attemptId,
    // The version the body is rendered in: the endpoint's pinned one, whose bytes the signature covers.
    'service-version': apiVersion,
  };
}

/** Signs and posts the body once (rendered in the delivery's version, attempt/context.ts); never throws for anything the endpoint or the network does. */
export async function postAttempt(
  deps: AttemptDeps,
  input: SignAndPostInput,
  endpoint: EndpointForDelivery,
  body: string,
): Promise<AttemptResult> {
  const result = await postWebhook(deps.http, {
    url: endpoint.url,
    body,
    headers: deliveryHeaders(input, body, endpoint.secrets, endpoint.apiVersion),
    timeoutMs: input.timeoutMs,
    allowPrivate: deps.config.webhook.allowPrivateTargets,
    pinnedCertificate: endpoint.localCertificate ?? undefined,
  });
  observeAttempt(result);
  return result;
}
