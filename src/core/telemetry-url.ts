/**
 * An endpoint's URL as telemetry shows it: its origin only (scheme, host and port), never its path, query or
 * userinfo. A merchant's URL often carries the receiver's own secret (`/hooks/<token>`, `?key=...`), and spans,
 * Temporal histories (inputs, outcomes, summaries, memos) and search attributes are read by people and
 * systems that must not hold it; the origin still tells them which receiver was called. Anything that is not an
 * absolute URL with an origin shows as an empty string. Pure: workflow code may use it.
 */
export function telemetryUrl(url: string): string {
  try {
    const origin = new URL(url).origin;
    return origin === 'null' ? '' : origin;
  } catch {
    return '';
  }
}
