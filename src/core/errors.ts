/**
 * The one error catalogue: every error the API can answer has a stable code, a status and a type.
 * Wire shape: {"error": {"type", "code", "message", ...extra}}.
 */
export const ERRORS = {
  // every code an error answer can carry; the status of each is fixed here
  missing_api_key: { status: 401, type: 'authentication_error' },
  malformed_api_key: { status: 401, type: 'authentication_error' },
  invalid_api_key: { status: 401, type: 'authentication_error' },
  revoked_api_key: { status: 401, type: 'authentication_error' },
  expired_api_key: { status: 401, type: 'authentication_error' },
  client_not_active: { status: 403, type: 'permission_error' },
  client_suspended: { status: 403, type: 'permission_error' },
  insufficient_scope: { status: 403, type: 'permission_error' },
  // request validation
  invalid_request: { status: 400, type: 'invalid_request_error' },
  parameter_missing: { status: 400, type: 'invalid_request_error' },
  parameter_invalid: { status: 400, type: 'invalid_request_error' },
  parameter_unknown: { status: 400, type: 'invalid_request_error' },
  invalid_json: { status: 400, type: 'invalid_request_error' },
  url_not_https: { status: 400, type: 'invalid_request_error' },
  invalid_url: { status: 400, type: 'invalid_request_error' },
  url_not_allowed: { status: 400, type: 'invalid_request_error' },
  unknown_event_type: { status: 400, type: 'invalid_request_error' },
  // a published event's data does not have its kind's shape (core/event-schemas.ts); `param` names the field
  invalid_event_data: { status: 400, type: 'invalid_request_error' },
  duplicate_event_type: { status: 400, type: 'invalid_request_error' },
  // an endpoint's custom header the service sets itself or that would change the request (domain/endpoint-headers.ts)
  header_not_allowed: { status: 400, type: 'invalid_request_error' },
  // an API version that is not served (core/versions): an endpoint's api_version, a Service-Version header
  unknown_api_version: { status: 400, type: 'invalid_request_error' },
  endpoint_not_subscribed: { status: 400, type: 'invalid_request_error' },
  endpoint_disabled: { status: 400, type: 'invalid_request_error' },
  resource_missing: { status: 404, type: 'invalid_request_error' },
  route_not_found: { status: 404, type: 'invalid_request_error' },
  method_not_allowed: { status: 405, type: 'invalid_request_error' },
  idempotency_conflict: { status: 409, type: 'invalid_request_error' },
  // per account and mode caps (domain/api-keys.ts, domain/endpoints.ts): a conflict with what already exists
  api_key_limit_reached: { status: 409, type: 'invalid_request_error' },
  endpoint_limit_reached: { status: 409, type: 'invalid_request_error' },
  // an endpoint's url or headers changed by another request while this one was applying its change: try again
  endpoint_changed_concurrently: { status: 409, type: 'invalid_request_error' },
  body_too_large: { status: 413, type: 'invalid_request_error' },
  unsupported_media_type: { status: 415, type: 'invalid_request_error' },
  rate_limited: { status: 429, type: 'rate_limit_error' },
  // an account's redeliveries still pending reached REDELIVERY_MAX_PENDING (domain/redelivery.ts)
  too_many_pending_deliveries: { status: 429, type: 'rate_limit_error' },
  // refused by Node's HTTP parser before Fastify sees a request
  request_timeout: { status: 408, type: 'invalid_request_error' },
  headers_too_large: { status: 431, type: 'invalid_request_error' },
  // internal route
  invalid_internal_token: { status: 401, type: 'authentication_error' },
  // developers page: a state-changing request from another site, or without its session's token
  csrf_failed: { status: 403, type: 'permission_error' },
  // ours
  service_unavailable: { status: 503, type: 'api_error' },
  internal_error: { status: 500, type: 'api_error' },
} as const satisfies Record<string, { status: number; type: string }>;

export type ErrorCode = keyof typeof ERRORS;

export interface ErrorBody {
  error: { type: string; code: ErrorCode; message: string; [extra: string]: unknown };
}

export class ApiError extends Error {
  readonly status: number;
  readonly type: string;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ApiError';
    this.status = ERRORS[code].status;
    this.type = ERRORS[code].type;
  }

  toBody(): ErrorBody {
    return { error: { type: this.type, code: this.code, message: this.message, ...this.extra } };
  }
}
