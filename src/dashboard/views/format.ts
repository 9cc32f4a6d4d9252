import { html, type Html } from './html';

/** ISO string (keys, notifications) or Unix seconds (endpoints, events, attempts), as the records carry them. */
export type Instant = string | number;

function toDate(value: Instant): Date {
  return typeof value === 'number' ? new Date(value * 1000) : new Date(value);
}

/** `2026-01-31 14:05 UTC`: the same on every machine; app.js rewrites it in the reader's time zone. */
export function utc(value: Instant): string {
  return `${toDate(value).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

export function relative(value: Instant, now: Date = new Date()): string {
  const seconds = Math.round((now.getTime() - toDate(value).getTime()) / 1000);
  const future = seconds < 0;
  const abs = Math.abs(seconds);
  if (abs < 60) return future ? 'in under a minute' : 'just now';
  const [amount, unit] =
    abs < 3600
      ? [Math.floor(abs / 60), 'minute']
      : abs < 86_400
        ? [Math.floor(abs / 3600), 'hour']
        : [Math.floor(abs / 86_400), 'day'];
  const text = `${amount} ${unit}${amount === 1 ? '' : 's'}`;
  return future ? `in ${text}` : `${text} ago`;
}

/** A <time> whose text is the relative time and whose title is the exact instant. */
export function time(value: Instant | null, options: { now?: Date; empty?: string } = {}): Html {
  if (value === null) return html`<span class="muted">${options.empty ?? 'Never'}</span>`;
  const iso = toDate(value).toISOString();
  return html`<time datetime="${iso}" title="${utc(value)}">${relative(value, options.now)}</time>`;
}

/** An absolute <time>, for records read long after (events, attempts). */
export function stamp(value: Instant): Html {
  const iso = toDate(value).toISOString();
  return html`<time datetime="${iso}" data-local>${utc(value)}</time>`;
}

export function duration(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
}

export function plural(count: number, one: string, many = `${one}s`): string {
  return `${count} ${count === 1 ? one : many}`;
}

/** What a delivery error code means to a merchant. */
export const ATTEMPT_ERRORS: Record<string, string> = {
  timeout: 'No answer within the time limit',
  connection_refused: 'Connection refused',
  connection_reset: 'Connection reset',
  dns: 'Host name not found',
  tls: 'TLS/certificate problem',
  redirect: 'Answered with a redirect (not followed)',
  ssrf_blocked: 'Address not allowed (private or local)',
  invalid_url: 'Invalid URL',
  network: 'Network error',
  internal_error: 'Problem on our side',
};

export function attemptError(code: string | null): string {
  if (code === null) return '';
  return ATTEMPT_ERRORS[code] ?? code.replace(/_/g, ' ');
}
