import type { FormError } from './models';

/**
 * The API's error codes in a merchant's words. The page raises no errors of its own: it shows the error the
 * domain function gave, with the words below when the API's message speaks to a developer (parameter names),
 * and the API's own message otherwise.
 */
const WORDS: Record<string, string> = {
  url_not_https: 'The URL must start with https://.',
  invalid_url: 'That is not a valid URL. Enter a full address such as https://shop.example/webhooks.',
  url_not_allowed: 'That URL points to a private or local address, which we never deliver to. Use a public address.',
  unknown_event_type: 'One of the chosen event kinds is unknown.',
  duplicate_event_type: 'An event kind is chosen twice.',
  api_key_limit_reached:
    'You have reached the limit of active API keys for this mode. Revoke one you no longer use first.',
  endpoint_limit_reached:
    'You have reached the limit of webhook endpoints for this mode. Delete one you no longer use first.',
  endpoint_disabled: 'That endpoint is disabled. Enable it first, then try again.',
  endpoint_not_subscribed: 'That endpoint is not subscribed to this kind of event, so it cannot receive it.',
  client_not_active:
    'Live mode needs an approved account: until then, everything works in test mode. Ask support to approve it once you have finished testing.',
  client_suspended: 'This account is suspended: nothing can be changed. Contact support.',
  resource_missing: 'That item no longer exists, or belongs to the other mode.',
  csrf_failed: 'This form expired or was sent from another site. Reload the page and try again.',
  rate_limited: 'Too many attempts. Wait a minute and try again.',
  service_unavailable:
    'We cannot reach our database or delivery engine right now. Nothing was changed; try again in a minute.',
  internal_error: 'Something went wrong on our side. Nothing was changed; try again.',
};

/** Codes whose API message is already plain (it names the limit or the value at fault). */
const KEEP_API_MESSAGE = new Set(['parameter_invalid', 'parameter_missing', 'invalid_request']);

/** Field names of the API's `param` as the forms label them. */
const FIELD_NAMES: Record<string, string> = {
  url: 'URL',
  description: 'Description',
  events: 'Events',
  rate_limit: 'Rate limit (per second)',
  scopes: 'Permissions',
  expires: 'Expires',
  expires_at: 'Expires',
  since: 'From',
  until: 'Until',
  type: 'Event kind',
  endpoint_id: 'Endpoint',
};

export function fieldName(param: string): string {
  return FIELD_NAMES[param.replace(/\[\d+\]$/, '')] ?? param;
}

export function merchantMessage(error: { code: string; message: string; param?: string }): FormError {
  const param = error.param?.replace(/\[\d+\]$/, '');
  if (KEEP_API_MESSAGE.has(error.code) || !WORDS[error.code]) return { message: error.message, param };
  return { message: WORDS[error.code] as string, param };
}
