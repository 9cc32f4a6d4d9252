import { createHash } from 'node:crypto';
import { ApiError } from '../core/errors';
import { newId, randomBase62 } from '../core/ids';
import type { Mode } from '../core/mode';
import type { Scope } from '../core/scopes';
import * as keys from '../db/api-keys';
import type { KeyForAuth, KeyRow, RevokedKeyRow } from '../db/api-keys';
import type { AccountStatus } from '../db/accounts';
import { withTransaction, type Db, type Pool } from '../db/pool';
import { isDependencyOutage, serviceUnavailable } from '../infra/outages';
import { getAccount } from './accounts';
import { recordAudit, type AuditActor } from './audit-log';

/**
 * API keys: their format, how they are made, listed and revoked (CLI, later a developers page), and how a
 * presented key is verified (the API's auth plugin). The plain key exists only in the caller's hands.
 */

/** A key is `svc_test_` or `svc_live_` + 32 characters [A-Za-z0-9]; anything else is malformed. */
export const API_KEY_PATTERN = /^svc_(test|live)_[A-Za-z0-9]{32}$/;
/** Longest string worth looking at as a key: anything longer is malformed without further work. */
export const API_KEY_LENGTH = 'svc_test_'.length + 32;

/** 32 base62 characters from a CSPRNG: about 190 bits, beyond guessing. */
export function generateApiKey(mode: Mode): string {
  return `svc_${mode}_${randomBase62(32)}`;
}

/**
 * A plain SHA-256 is enough: the key carries ~190 random bits, so no slow hash or salt is needed against
 * brute force, and a fast hash keeps authentication to one indexed lookup.
 */
export function hashApiKey(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest();
}

export function keyMode(key: string): Mode | undefined {
  const match = API_KEY_PATTERN.exec(key);
  return match ? (match[1] as Mode) : undefined;
}

export function keyLast4(key: string): string {
  return key.slice(-4);
}

/** How a key is shown after creation: its mode prefix and last four, never more. */
export function redactedKey(mode: Mode, last4: string): string {
  return `svc_${mode}_...${last4}`;
}

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/i;

/**
 * An ISO 8601 date (`2026-01-31`, midnight UTC) or date-time. A date-time without an offset is read as UTC,
 * not the operator's local time, so the same command gives the same expiry on every machine. Impossible
 * calendar dates (2026-02-30) are refused rather than rolled over. A past date is allowed: the key is born
 * expired, which is what one wants to try expiry handling.
 */
export function parseExpiry(input: string): Date {
  const text = input.trim();
  const match = ISO_DATE.exec(text);
  const invalid = () =>
    new ApiError(
      'parameter_invalid',
      `Invalid expiry ${JSON.stringify(input)}: use an ISO 8601 date or date-time, e.g. 2026-12-31T23:59:59Z.`,
      {
        param: 'expires',
      },
    );
  if (!match) throw invalid();
  const [, year, month, day, hour, minute, second, zone] = match;
  const normalized =
    hour === undefined
      ? `${year}-${month}-${day}T00:00:00Z`
      : zone
        ? text.replace(' ', 'T')
        : `${text.replace(' ', 'T')}Z`;
  const date = new Date(normalized);
  if (Number.isNaN(date.getTime())) throw invalid();
  const calendar = new Date(Date.UTC(Number(year), Number(month) - 1, Number(day)));
  if (calendar.getUTCDate() !== Number(day) || calendar.getUTCMonth() !== Number(month) - 1) throw invalid();
  if (Number(hour ?? 0) > 23 || Number(minute ?? 0) > 59 || Number(second ?? 0) > 59) throw invalid();
  return date;
}

/** What operators see of a key: never the key itself, nor its hash. */
export interface ApiKeyRecord {
  id: string;
  object: 'api_key';
  account_id: string;
  mode: Mode;
  livemode: boolean;
  redacted: string;
  last4: string;
  scopes: string[];
  description: string | null;
  expires_at: string | null;
  revoked: boolean;
  revoked_at: string | null;
  last_used_at: string | null;
  created_at: string;
}

export interface CreatedApiKey extends ApiKeyRecord {
  /** The only time the key exists outside the caller's hands. */
  key: string;
}

function toRecord(row: KeyRow): ApiKeyRecord {
  return {
    id: row.id,
    object: 'api_key',
    account_id: row.account_id,
    mode: row.mode,
    livemode: row.mode === 'live',
    redacted: redactedKey(row.mode, row.last4),
    last4: row.last4,
    scopes: row.scopes,
    description: row.description,
    expires_at: row.expires_at?.toISOString() ?? null,
    revoked: row.revoked_at !== null,
    revoked_at: row.revoked_at?.toISOString() ?? null,
    last_used_at: row.last_used_at?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
  };
}

/**
 * Active keys (not revoked, not expired) an account may hold per mode. Each key has its own rate-limit budget,
 * but the account's budget caps them together (api/plugins/rate-limit.ts); 50 leaves room for a key per service
 * and environment plus an overlap while rotating.
 */
export const MAX_ACTIVE_API_KEYS_PER_MODE = 50;

/**
 * Pending means test only, everywhere: a suspended account changes nothing and live mode opens once the account
 * is approved (active). The API applies it to every key it verifies; the developers page to every change it
 * makes, and to key creation.
 */
export function assertModeOpen(
  status: AccountStatus,
  mode: Mode,
  refused = 'Live mode works once the account is approved; test mode works now.',
): void {
  if (status === 'suspended') throw new ApiError('client_suspended', 'This account is suspended.');
  if (mode === 'live' && status !== 'active') throw new ApiError('client_not_active', refused);
}

export async function createApiKey(
  pool: Pool,
  input: { accountId: string; mode: Mode; scopes: Scope[]; expiresAt?: Date; description?: string },
  actor: AuditActor,
): Promise<CreatedApiKey> {
  if (input.scopes.length === 0)
    throw new ApiError('parameter_invalid', 'A key needs at least one scope.', { param: 'scopes' });
  const description = input.description?.trim() || null;
  if (description !== null && description.length > 500) {
    throw new ApiError('parameter_invalid', 'The description must be at most 500 characters.', {
      param: 'description',
    });
  }
  await getAccount(pool, input.accountId);
  const key = generateApiKey(input.mode);
  const row = await withTransaction(pool, async (tx) => {
    const inserted = await keys.insertApiKey(
      tx,
      {
        id: newId('apiKey'),
        accountId: input.accountId,
        mode: input.mode,
        keyHash: hashApiKey(key),
        last4: keyLast4(key),
        scopes: input.scopes,
        description,
        expiresAt: input.expiresAt ?? null,
      },
      MAX_ACTIVE_API_KEYS_PER_MODE,
    );
    if (inserted) await recordKeyChange(tx, inserted, 'api_key.created', actor);
    return inserted;
  });
  if (!row) {
    throw new ApiError(
      'api_key_limit_reached',
      `An account can have at most ${MAX_ACTIVE_API_KEYS_PER_MODE} active ${input.mode} keys; revoke one it no longer uses first.`,
    );
  }
  return { ...toRecord(row), key };
}

/**
 * A key a merchant creates for itself (the developers page): test keys at once, live keys only on an
 * approved account; a suspended account creates nothing. An operator (CLI) may prepare keys for any account.
 */
export async function createApiKeyAsMerchant(
  pool: Pool,
  input: { accountId: string; mode: Mode; scopes: Scope[]; expiresAt?: Date; description?: string },
  actor: AuditActor,
): Promise<CreatedApiKey> {
  const account = await getAccount(pool, input.accountId);
  assertModeOpen(
    account.status,
    input.mode,
    'Live keys can be created once the account is approved; test keys work now.',
  );
  return createApiKey(pool, input, actor);
}

export async function listApiKeys(pool: Pool, accountId: string): Promise<ApiKeyRecord[]> {
  await getAccount(pool, accountId);
  return (await keys.listApiKeys(pool, accountId)).map(toRecord);
}

function keyMissing(keyId: string): ApiError {
  return new ApiError('resource_missing', `No such API key: ${JSON.stringify(keyId.slice(0, 80))}.`, { param: 'key' });
}

/**
 * A merchant revoking one of its keys (the developers page): the key must be of this account and of this mode;
 * any other, another account's or its own in the other mode, is as missing as an unknown one and stays as it is.
 * Immediate: authentication reads revoked_at on every request.
 */
export async function revokeApiKey(
  pool: Pool,
  scope: { accountId: string; livemode: boolean },
  keyId: string,
  actor: AuditActor,
): Promise<ApiKeyRecord> {
  const row = await withTransaction(pool, (tx) => recordedRevoke(tx, keys.revokeApiKey(tx, scope, keyId), actor));
  if (!row) throw keyMissing(keyId);
  return toRecord(row);
}

/** An operator revoking any key by its id (CLI `keys revoke KEY_ID`): operators act for every account. */
export async function revokeApiKeyAsOperator(pool: Pool, keyId: string, actor: AuditActor): Promise<ApiKeyRecord> {
  const row = await withTransaction(pool, (tx) => recordedRevoke(tx, keys.revokeApiKeyById(tx, keyId), actor));
  if (!row) throw keyMissing(keyId);
  return toRecord(row);
}

function recordKeyChange(
  tx: Db,
  row: KeyRow,
  action: 'api_key.created' | 'api_key.revoked',
  actor: AuditActor,
): Promise<void> {
  return recordAudit(tx, {
    accountId: row.account_id,
    livemode: row.mode === 'live',
    action,
    actor,
    target: { type: 'api_key', id: row.id },
  });
}

/** A key revoked before stays as it was and records nothing: the entry is the revocation's, made once. */
async function recordedRevoke(
  tx: Db,
  revoking: Promise<RevokedKeyRow | undefined>,
  actor: AuditActor,
): Promise<RevokedKeyRow | undefined> {
  const row = await revoking;
  if (row?.newly_revoked) await recordKeyChange(tx, row, 'api_key.revoked', actor);
  return row;
}

// ---- Verifying a presented key ----------------------------------------------------------------------------

export interface KeyContext {
  keyId: string;
  accountId: string;
  livemode: boolean;
  scopes: string[];
}

const LAST_USED_RESOLUTION_MS = 60_000;

/** The checks after the lookup, in the contract's order: revoked, expired, suspended, live key on a pending account. */
export function checkKey(found: KeyForAuth, now: Date): void {
  if (found.revoked_at) throw new ApiError('revoked_api_key', 'This API key has been revoked.');
  if (found.expires_at && found.expires_at.getTime() <= now.getTime()) {
    throw new ApiError('expired_api_key', 'This API key has expired.');
  }
  assertModeOpen(found.account_status, found.mode, 'Live keys work once the account is approved; test keys work now.');
}

/** A key taken from a request (its shape already checked by the caller): whose it is and what it may do. */
export async function verifyApiKey(pool: Pool, key: string, now = new Date()): Promise<KeyContext> {
  if (key.length > API_KEY_LENGTH || !API_KEY_PATTERN.test(key)) {
    throw new ApiError(
      'malformed_api_key',
      'The API key is not shaped like a key (svc_test_... or svc_live_...); check for a truncated paste.',
    );
  }
  let found: KeyForAuth | undefined;
  try {
    // Looked up by hash: the database never sees the key, and index timing reveals nothing about it.
    found = await keys.findKeyForAuth(pool, hashApiKey(key));
  } catch (err) {
    if (isDependencyOutage(err)) throw serviceUnavailable('Authentication is unavailable right now; retry shortly.');
    throw err;
  }
  if (!found) throw new ApiError('invalid_api_key', 'Invalid API key provided.');
  checkKey(found, now);
  if (!found.last_used_at || now.getTime() - found.last_used_at.getTime() >= LAST_USED_RESOLUTION_MS) {
    // Not awaited: the indicator is advisory and must not slow or fail the request.
    keys.touchKeyLastUsed(pool, found.id).catch(() => undefined);
  }
  return { keyId: found.id, accountId: found.account_id, livemode: found.mode === 'live', scopes: found.scopes };
}
