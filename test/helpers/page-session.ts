import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import type { Pool } from '../../src/db/pool';
import { createSignInLink, findSession, openSession } from '../../src/domain/dashboard-sessions';

/**
 * Developers-page sessions for tests that post the page's forms through app.inject, and a snapshot of every row
 * a form could change, to prove a refused form changed nothing.
 */

/** The origin the app sees on an injected request (no PUBLIC_URL): http on the default Host. */
const INJECT_ORIGIN = 'http://localhost:80';

export interface PageSession {
  /** The session's public id, as the audit log names it. */
  id: string;
  cookie: string;
  csrf: string;
  /** A form post (or another method) as the page's own form sends it; `csrf`/`origin` replace the right ones. */
  send(
    method: string,
    url: string,
    fields?: Record<string, string>,
    options?: { csrf?: string | null; origin?: string | null },
  ): Promise<LightMyRequestResponse>;
}

/** A signed-in session of the account, on loopback http (cookie name without the __Host- prefix). */
export async function pageSession(app: FastifyInstance, pool: Pool, accountId: string): Promise<PageSession> {
  const link = await createSignInLink(pool, { accountId, origin: INJECT_ORIGIN });
  const opened = await openSession(pool, link.url.split('/').pop() as string);
  const found = await findSession(pool, opened?.sessionId);
  if (!opened || !found) throw new Error('no session opened');
  const cookie = `parcel_dashboard_session=${opened.sessionId}`;
  return {
    id: found.id,
    cookie,
    csrf: found.csrfToken,
    send(method, url, fields = {}, options = {}) {
      const headers: Record<string, string> = { cookie, 'content-type': 'application/x-www-form-urlencoded' };
      const origin = options.origin === undefined ? INJECT_ORIGIN : options.origin;
      if (origin !== null) headers.origin = origin;
      const form = new URLSearchParams(fields);
      const csrf = options.csrf === undefined ? found.csrfToken : options.csrf;
      if (csrf !== null) form.set('_csrf', csrf);
      return app.inject({ method: method as 'POST', url, headers, payload: form.toString() });
    },
  };
}

/**
 * Every row of these accounts a form or an API call could change, as JSON: endpoints, keys, events, deliveries,
 * sessions (but when each was last seen, which any request moves) and sign-in links.
 */
export async function snapshotOf(pool: Pool, accountIds: string[]): Promise<Record<string, unknown[]>> {
  const rows = async (sql: string) => (await pool.query<{ row: unknown }>(sql, [accountIds])).rows.map((r) => r.row);
  return {
    endpoints: await rows('SELECT to_jsonb(t) AS row FROM webhook_endpoints t WHERE account_id = ANY($1) ORDER BY id'),
    keys: await rows('SELECT to_jsonb(t) AS row FROM api_keys t WHERE account_id = ANY($1) ORDER BY id'),
    events: await rows('SELECT to_jsonb(t) AS row FROM events t WHERE account_id = ANY($1) ORDER BY id'),
    deliveries: await rows('SELECT to_jsonb(t) AS row FROM deliveries t WHERE account_id = ANY($1) ORDER BY id'),
    sessions: await rows(
      `SELECT to_jsonb(t) - 'last_seen_at' AS row FROM dashboard_sessions t WHERE account_id = ANY($1) ORDER BY id_hash`,
    ),
    audit: await rows('SELECT to_jsonb(t) AS row FROM audit_log t WHERE account_id = ANY($1) ORDER BY id'),
    links: await rows(
      'SELECT to_jsonb(t) AS row FROM dashboard_sign_in_links t WHERE account_id = ANY($1) ORDER BY token_hash',
    ),
  };
}
