import { createHash, timingSafeEqual } from 'node:crypto';
import { ApiError } from '../core/errors';
import { randomBase62 } from '../core/ids';
import * as sessions from '../db/dashboard-sessions';
import type { Pool } from '../db/pool';
import type { Config } from '../infra/config';
import { getAccount, type AccountStatus } from './accounts';

/**
 * Signing in to the developers page: a single-use link handed to the parcel service (internal route) or an
 * operator (CLI) opens a server-side session. Opening the link only looks at it; the page's own form posts it
 * back to use it, so mail scanners and link previews cannot burn it. Tokens and session ids are random, shown
 * once, and stored only as SHA-256 hashes.
 */

/** A link is valid 10 minutes; a session 12 hours at most, and ends sooner after 30 minutes without a request. */
export const SIGN_IN_LINK_TTL_MS = 10 * 60_000;
export const SESSION_TTL_MS = 12 * 3_600_000;
export const SESSION_IDLE_MS = 30 * 60_000;
/** How stale the recorded last request may get before a request records it again: one write a minute at most. */
export const SESSION_TOUCH_AFTER_MS = 60_000;

/** 43 base62 characters, about 256 bits: beyond guessing, so a plain hash is enough (as for API keys). */
const TOKEN_LENGTH = 43;
const TOKEN_PATTERN = /^[A-Za-z0-9]{43}$/;
export const SIGN_IN_PATH = '/dashboard/sign-in/';

const sha256 = (value: string): Buffer => createHash('sha256').update(value, 'utf8').digest();

/**
 * Where links point when no request says it: PUBLIC_URL, else the API's own listening address (a wildcard read
 * as loopback), as an operator on this machine reaches it.
 */
export function configuredOrigin(config: Pick<Config, 'publicUrl' | 'host' | 'port'>): string {
  if (config.publicUrl) return config.publicUrl;
  const host = ['0.0.0.0', '::', '[::]', ''].includes(config.host) ? '127.0.0.1' : config.host;
  return `http://${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${config.port}`;
}

export interface SignInLink {
  url: string;
  /** Unix seconds. */
  expires_at: number;
}

/**
 * A link for one account, absolute on `origin` (PUBLIC_URL, or the API's own address). Any account may
 * sign in, a suspended one too: it then sees why nothing works and can change nothing.
 */
export async function createSignInLink(pool: Pool, input: { accountId: string; origin: string }): Promise<SignInLink> {
  await getAccount(pool, input.accountId);
  const token = randomBase62(TOKEN_LENGTH);
  const expiresAt = await sessions.insertSignInLink(pool, {
    tokenHash: sha256(token),
    accountId: input.accountId,
    ttlMs: SIGN_IN_LINK_TTL_MS,
  });
  return {
    url: new URL(`${SIGN_IN_PATH}${token}`, input.origin).toString(),
    expires_at: Math.floor(expiresAt.getTime() / 1000),
  };
}

export interface OpenedSession {
  /** For the cookie only; never stored. */
  sessionId: string;
  expiresAt: Date;
}

/** Whether the link could sign in now; changes nothing (opening a link must not use it up). */
export async function isSignInLinkUsable(pool: Pool, token: string): Promise<boolean> {
  return TOKEN_PATTERN.test(token) && sessions.isSignInLinkUsable(pool, sha256(token));
}

/**
 * Uses the link once. Undefined for a link unknown, already used or expired: the caller cannot tell which.
 * The session the browser signed in with before (`previousSessionId`, from its cookie) ends: one browser, one
 * session, so a sign-in forced on someone leaves nothing of their own session behind to be reused.
 */
export async function openSession(
  pool: Pool,
  token: string,
  previousSessionId?: string,
): Promise<OpenedSession | undefined> {
  if (!TOKEN_PATTERN.test(token)) return undefined;
  const sessionId = randomBase62(TOKEN_LENGTH);
  const opened = await sessions.useSignInLinkAndOpenSession(pool, {
    tokenHash: sha256(token),
    sessionIdHash: sha256(sessionId),
    csrfToken: randomBase62(TOKEN_LENGTH),
    ttlMs: SESSION_TTL_MS,
  });
  if (!opened) return undefined;
  await endSession(pool, previousSessionId);
  return { sessionId, expiresAt: opened.expires_at };
}

export interface DashboardSession {
  /**
   * The session's public id (dss_...), for the audit log: derived from the stored hash by a second hash, so it
   * neither signs anyone in nor leads back to the cookie.
   */
  id: string;
  account: { id: string; name: string; status: AccountStatus };
  csrfToken: string;
  expiresAt: Date;
}

/** dss_ + 24 hex digits of SHA-256 over the stored hash: stable for the session's life, one-way. */
export function publicSessionId(idHash: Buffer): string {
  return `dss_${createHash('sha256').update(idHash).digest('hex').slice(0, 24)}`;
}

export async function findSession(pool: Pool, sessionId: string | undefined): Promise<DashboardSession | undefined> {
  if (sessionId === undefined || !TOKEN_PATTERN.test(sessionId)) return undefined;
  const idHash = sha256(sessionId);
  const row = await sessions.findLiveSession(pool, idHash, {
    idleMs: SESSION_IDLE_MS,
    touchAfterMs: SESSION_TOUCH_AFTER_MS,
  });
  if (!row) return undefined;
  if (row.touch_due) await sessions.touchSession(pool, idHash);
  return {
    id: publicSessionId(idHash),
    account: { id: row.account_id, name: row.account_name, status: row.account_status },
    csrfToken: row.csrf_token,
    expiresAt: row.expires_at,
  };
}

/** Sign-out: the session stops working at once, whatever the browser keeps. */
export async function endSession(pool: Pool, sessionId: string | undefined): Promise<void> {
  if (sessionId !== undefined && TOKEN_PATTERN.test(sessionId)) await sessions.endSession(pool, sha256(sessionId));
}

/** "Sign out everywhere": every session of the account ends, in every browser. */
export async function endAccountSessions(pool: Pool, session: DashboardSession): Promise<number> {
  return sessions.endAccountSessions(pool, session.account.id);
}

/** The token a state-changing form carries back, compared in constant time. */
export function checkCsrfToken(session: DashboardSession, presented: unknown): void {
  const ok = typeof presented === 'string' && timingSafeEqual(sha256(presented), sha256(session.csrfToken));
  if (!ok)
    throw new ApiError(
      'csrf_failed',
      'The form is missing its session token or it does not match; reload the page and try again.',
    );
}
