import type { SettingsRecord } from '../../core/endpoint-settings';

/**
 * What the views render: the same records the API answers (ids, Unix seconds or ISO strings as the domain
 * gives them), declared here structurally so the views depend on no module above or beside them.
 */

export type Mode = 'test' | 'live';
export type AccountStatus = 'pending' | 'active' | 'suspended';
export type Section = 'overview' | 'keys' | 'endpoints' | 'events' | 'event-types' | 'audit-log';

export interface AccountView {
  id: string;
  name: string;
  status: AccountStatus;
}

export interface AssetUrls {
  css: string;
  js: string;
  icon: string;
}

/** Everything the frame of a signed-in page needs. */
export interface PageContext {
  account: AccountView;
  mode: Mode;
  /** Sent back in every state-changing form. */
  csrfToken: string;
  assets: AssetUrls;
  /** A fixed message after a redirect (never text from the request). */
  notice?: string;
  /** Set when the page answers a form post: where a reload should go instead of posting again. */
  canonical?: string;
  /** The sections offered in the navigation; all of them when absent. */
  sections?: Section[];
  /** For relative times; tests pin it. */
  now?: Date;
}

export interface FormError {
  message: string;
  /** The form field at fault, when the error names one. */
  param?: string;
}

export interface ScopeOption {
  name: string;
  description: string;
}

export interface KeyView {
  id: string;
  mode: Mode;
  last4: string;
  scopes: string[];
  description: string | null;
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
  created_at: string;
}

/** The settings a view may leave out (a summary shows its url, events, description and status). */
type OptionalSettings = Exclude<keyof SettingsRecord, 'url' | 'events' | 'description' | 'status'>;

/** An endpoint as the API's record gives it: one field per setting (core/endpoint-settings.ts), `events` as read. */
export type EndpointView = {
  id: string;
  livemode: boolean;
  /** Unix seconds. */
  created: number;
  /** Disabled endpoints that are also failing keep the mark: shown beside the status. */
  failing?: boolean;
  events: readonly string[];
} & Omit<Pick<SettingsRecord, Exclude<keyof SettingsRecord, OptionalSettings>>, 'events'> & {
    [K in OptionalSettings]?: SettingsRecord[K] | undefined;
  };

export interface NotificationView {
  id: string;
  subject: string;
  body: string;
  email_to: string | null;
  email_sent_at: string | null;
  created_at: string;
}

export type Trigger = 'automatic' | 'resend' | 'recover' | 'test';

export interface AttemptView {
  id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  attempt: number;
  trigger?: Trigger;
  status_code: number | null;
  response_body: string | null;
  error: string | null;
  duration_ms: number;
  succeeded: boolean;
  /** Set on the entry of a delivery given up without an attempt: expired. */
  reason?: string | null;
  /** Unix seconds. */
  created: number;
}

export interface EventView {
  id: string;
  type: string;
  /** Unix seconds. */
  created: number;
  livemode: boolean;
  pending_webhooks?: number;
  /** Where its delivery stands, from its deliveries. */
  delivery_state?: 'delivered' | 'retrying' | 'abandoned' | 'none';
  /** The parcel it is about, when it names one. */
  parcel_number?: string;
}

export interface EventDeliveryView {
  endpoint_id: string;
  trigger: Trigger;
  status: 'pending' | 'succeeded' | 'failed' | 'skipped';
  /** Why it was skipped or failed (endpoint_disabled, attempts_exhausted, ...). */
  reason?: string | null;
  attempts: number;
  last_status_code: number | null;
  last_attempt_at: number | null;
  /** An ordered delivery held back until this event's delivery to the same endpoint has ended. */
  waiting_for?: string | null;
}

export interface EventDetailView extends EventView {
  data: unknown;
  deliveries: EventDeliveryView[];
}

/** One change to a key or an endpoint and who made it (domain/audit-log.ts). */
export interface AuditEntryView {
  id: string;
  action: string;
  actor: { type: 'api_key' | 'dashboard' | 'cli' | 'system'; id: string | null };
  target: { type: string; id: string };
  changes?: string[];
  created: number;
}

export interface Page<T> {
  data: T[];
  hasMore: boolean;
}

/** Attempts of one UTC hour by outcome. */
export interface HourCountsView {
  /** Start of the hour. */
  hour: Date;
  succeeded: number;
  failed: number;
  abandoned: number;
}

export interface OutcomeTotalsView {
  succeeded: number;
  failed: number;
  abandoned: number;
  attempts: number;
  /** 0..1; null without attempts. */
  successRate: number | null;
}

/** An endpoint's deliveries over a window of hours, for its chart. */
export interface EndpointHealthView {
  window: '24h' | '7d';
  /** Every hour of the window, oldest first, zeros included. */
  hours: HourCountsView[];
  totals: OutcomeTotalsView;
  p50Ms: number | null;
  p95Ms: number | null;
}

/** One endpoint's last day, for the overview. */
export interface EndpointSummaryView {
  endpoint: EndpointView;
  hours: HourCountsView[];
  totals: OutcomeTotalsView;
}
