import Type, { type Static } from 'typebox';
import {
  DESCRIPTION_MAX_LENGTH,
  ENDPOINT_ORDERINGS,
  ENDPOINT_SETTINGS,
  RATE_LIMIT_MAX,
  RATE_LIMIT_MIN,
  rowField,
  settingSchemas,
  settingsWith,
  type EndpointOrdering,
  type EndpointSetting,
  type SettingColumnValues,
  type SettingsWith,
  type WritableSettingName,
} from '../core/endpoint-settings';
import { ApiError } from '../core/errors';
import { EVENT_TYPES, isEventType } from '../core/event-catalog';
import { newId } from '../core/ids';
import { generateSecret, sealSecret, SecretUnavailableError, type KeyRing } from '../core/secrets';
import { API_VERSION_NAMES, isApiVersion, LATEST_API_VERSION } from '../core/versions';
import * as endpoints from '../db/endpoints';
import type { EndpointRow, EndpointScope } from '../db/endpoints';
import { withTransaction, type Db, type Pool } from '../db/pool';
import type { Config } from '../infra/config';
import { checkWebhookUrl, type Lookup } from '../infra/ssrf';
import { CLI_ACTOR, recordAudit, type AuditAction, type AuditActor } from './audit-log';
import {
  applyHeaderChange,
  headersForUrlChange,
  openHeaders,
  sealHeaders,
  shownHeaders,
  validateHeaders,
} from './endpoint-headers';

/**
 * Webhook endpoints: registering, reading, listing, removing and rotating secrets, behind /v1/webhooks and
 * reusable by the CLI and tests. Every function is scoped to one account and one mode; anything outside it is
 * `resource_missing`. Deliveries to an endpoint are domain/deliveries.ts's; its health, endpoint-health.ts's.
 */

export interface EndpointDeps {
  pool: Pool;
  config: Pick<Config, 'webhook'>;
  /** Replaces dns.lookup for the SSRF check (tests). */
  lookup?: Lookup;
}

export const MAX_ROTATION_GRACE_SECONDS = 7 * 86_400;
export const ENDPOINT_ID = /^we_[A-Za-z0-9]{1,64}$/;

/** What the API shows of an endpoint: its identity, then every setting with a record field (core/endpoint-settings.ts). */
export const EndpointRecord = Type.Object({
  id: Type.String(),
  object: Type.Literal('webhook_endpoint'),
  ...settingSchemas('record'),
  livemode: Type.Boolean(),
  created: Type.Integer({ description: 'Unix seconds.' }),
});
export type EndpointRecord = Static<typeof EndpointRecord>;

export const EndpointWithSecret = Type.Object({
  ...EndpointRecord.properties,
  secret: Type.String({ description: 'Signing secret (whsec_...); shown only in this response.' }),
});
export type EndpointWithSecret = Static<typeof EndpointWithSecret>;

/** A registration's body: every setting with a create field. */
export const EndpointCreateBody = Type.Object(settingSchemas('create'), { additionalProperties: false });
/** A PATCH body: every setting with an update field. */
export const EndpointUpdateBody = Type.Object(settingSchemas('update'), { additionalProperties: false });

/** A body as the page and the CLI may also send it: a choice among names is any text, refused here if unknown. */
type Loose<T> = { [K in keyof T]: NonNullable<T[K]> extends string ? string | Exclude<T[K], string> : T[K] };

export interface Page<T> {
  data: T[];
  hasMore: boolean;
}

export const unixSeconds = (date: Date): number => Math.floor(date.getTime() / 1000);

/** What the merchant reads: disabled over paused over the health mark (which a pause or a disable keeps). */
export function endpointStatus(row: Pick<EndpointRow, 'disabled' | 'paused_at' | 'status'>): EndpointRecord['status'] {
  if (row.disabled) return 'disabled';
  return row.paused_at === null ? row.status : 'paused';
}

/** The record fields that are not their row field as is. */
const RECORD_READERS: { [K in SettingsWith<'record'>]?: (row: EndpointRow, ring: KeyRing) => EndpointRecord[K] } = {
  // Stored empty so kinds added later reach it too; shown as what it receives today.
  events: (row) => (row.events.length === 0 ? [...EVENT_TYPES] : row.events),
  status: (row) => endpointStatus(row),
  disabled_reason: (row) => (row.disabled ? row.disabled_reason : null),
  paused_at: (row) => (row.paused_at === null ? null : unixSeconds(row.paused_at)),
  headers: (row, ring) => shownHeaders(row.stored_headers, row.id, ring),
};

/** `ring` opens the custom headers (shown with credentials hidden); without it they show as none. */
export function toEndpointRecord(row: EndpointRow, ring: KeyRing = []): EndpointRecord {
  const fields = row as unknown as Record<string, unknown>;
  const settings = Object.fromEntries(
    settingsWith('record').map((name) => {
      const reader = RECORD_READERS[name];
      return [name, reader ? reader(row, ring) : fields[rowField(name)]];
    }),
  );
  return {
    id: row.id,
    object: 'webhook_endpoint',
    ...settings,
    livemode: row.livemode,
    created: unixSeconds(row.created_at),
  } as EndpointRecord;
}

export function endpointMissing(id: string, param?: string): ApiError {
  const shown = id.length > 80 ? `${id.slice(0, 80)}...` : id;
  return new ApiError('resource_missing', `No such webhook endpoint: '${shown}'.`, param ? { param } : {});
}

/** Every kind known and none twice; an empty list means every kind. */
export function validateEventTypes(events: readonly string[]): string[] {
  const seen = new Set<string>();
  events.forEach((kind, index) => {
    if (!isEventType(kind)) {
      throw new ApiError(
        'unknown_event_type',
        `Unknown event kind '${kind.slice(0, 100)}'; expected one of ${EVENT_TYPES.join(', ')}.`,
        {
          param: `events[${index}]`,
        },
      );
    }
    if (seen.has(kind)) {
      throw new ApiError('duplicate_event_type', `The event kind '${kind}' is listed more than once.`, {
        param: `events[${index}]`,
      });
    }
    seen.add(kind);
  });
  return [...seen];
}

function validateDescription(description: string | null | undefined): string | null {
  if (description === undefined || description === null) return null;
  if (description.length > DESCRIPTION_MAX_LENGTH) {
    throw new ApiError('parameter_invalid', `The description is longer than ${DESCRIPTION_MAX_LENGTH} characters.`, {
      param: 'description',
    });
  }
  // PostgreSQL text cannot hold NUL; refuse it here rather than fail in the database.
  if (description.includes('\u0000')) {
    throw new ApiError('parameter_invalid', 'The description must not contain NUL characters.', {
      param: 'description',
    });
  }
  return description;
}

/** A served API version (core/versions); `param` names where it came from. Absent stays absent. */
export function validateApiVersion(version: string | undefined, param = 'api_version'): string | undefined {
  if (version === undefined || isApiVersion(version)) return version;
  throw new ApiError(
    'unknown_api_version',
    `Unknown API version ${JSON.stringify(version.slice(0, 100))}; use one of ${API_VERSION_NAMES.join(', ')}.`,
    {
      param,
    },
  );
}

/** 'none' or 'parcel'; anything else (a form, the CLI, a client past the schema) is a 400. */
export function validateOrdering(ordering: string | undefined): EndpointOrdering | undefined {
  if (ordering === undefined) return undefined;
  if (!(ENDPOINT_ORDERINGS as readonly string[]).includes(ordering)) {
    throw new ApiError('parameter_invalid', `Invalid ordering: must be one of ${ENDPOINT_ORDERINGS.join(', ')}.`, {
      param: 'ordering',
    });
  }
  return ordering as EndpointOrdering;
}

/** Checked here as well as by the API's schema: the page and the CLI come through here too. */
export function validateRateLimit(rateLimit: unknown): number | null {
  if (rateLimit === null) return null;
  if (
    typeof rateLimit !== 'number' ||
    !Number.isInteger(rateLimit) ||
    rateLimit < RATE_LIMIT_MIN ||
    rateLimit > RATE_LIMIT_MAX
  ) {
    throw new ApiError(
      'parameter_invalid',
      `The rate limit is a whole number of deliveries per second from ${RATE_LIMIT_MIN} to ${RATE_LIMIT_MAX}, or null for none.`,
      { param: 'rate_limit' },
    );
  }
  return rateLimit;
}

export type RegisterInput = Loose<Static<typeof EndpointCreateBody>>;

/** The checks of the settings a body gives as they are; url and headers have rules of their own (below). */
const CHECKS = {
  description: (value: string | null) => validateDescription(value),
  rate_limit: (value: number | null) => validateRateLimit(value),
  events: (value: readonly string[]) => validateEventTypes(value),
  ordering: (value: string) => validateOrdering(value),
  api_version: (value: string) => validateApiVersion(value),
} satisfies { [K in Exclude<WritableSettingName, 'url' | 'headers'>]: (value: never) => unknown };

type Checked = keyof typeof CHECKS;
const CHECKED = Object.keys(CHECKS) as Checked[];

/** The values of the settings `input` gives, checked, by setting (the url and headers left to the caller). */
function checkedSettings(input: Partial<Record<Checked, unknown>>): SettingColumnValues {
  const settings: SettingColumnValues = {};
  for (const name of CHECKED) {
    const value = input[name];
    if (value !== undefined) settings[name] = (CHECKS[name] as (value: unknown) => unknown)(value);
  }
  return settings;
}

/**
 * Endpoints an account may have per mode, deleted ones aside; `listen`'s session endpoint counts in test mode.
 * One event is one workflow with a ladder per endpoint: a fully failing ladder writes about 34 history events,
 * so 20 keeps the worst event far below Temporal's 50,000-event history limit, and 20 is above what a merchant
 * needs (Stripe allows 16).
 */
export const MAX_ENDPOINTS_PER_MODE = 20;

function endpointLimitReached(): ApiError {
  return new ApiError(
    'endpoint_limit_reached',
    `An account can have at most ${MAX_ENDPOINTS_PER_MODE} webhook endpoints per mode; delete one first.`,
  );
}

export const ringOf = (deps: EndpointDeps): KeyRing => deps.config.webhook.secretEncryptionKeys;

/** Sealed under the newest key of the ring, bound to the endpoint it belongs to (core/secrets.ts). */
function seal(deps: EndpointDeps, secret: string, endpointId: string): string {
  return sealSecret(secret, endpointId, ringOf(deps));
}

/** The audit entry of a change to an endpoint, in the change's transaction (domain/audit-log.ts). */
function recordEndpointChange(
  tx: Db,
  row: EndpointRow,
  action: AuditAction,
  actor: AuditActor,
  changes?: string[],
): Promise<void> {
  return recordAudit(tx, {
    accountId: row.account_id,
    livemode: row.livemode,
    action,
    actor,
    target: { type: 'webhook_endpoint', id: row.id },
    changes,
  });
}

/** An endpoint's insert and its endpoint.created entry, together; undefined at the limit. */
function insertRecorded(deps: EndpointDeps, row: endpoints.NewEndpoint, actor: AuditActor) {
  return withTransaction(deps.pool, async (tx) => {
    const inserted = await endpoints.insertEndpoint(tx, row, MAX_ENDPOINTS_PER_MODE);
    if (inserted) await recordEndpointChange(tx, inserted, 'endpoint.created', actor);
    return inserted;
  });
}

/** Validates everything before writing, so a refused registration creates nothing. */
export async function registerEndpoint(
  deps: EndpointDeps,
  scope: EndpointScope,
  input: RegisterInput,
  actor: AuditActor,
): Promise<EndpointWithSecret> {
  const settings = checkedSettings(input);
  const headers = validateHeaders(input.headers);
  const url = await checkWebhookUrl(input.url, {
    allowPrivateTargets: deps.config.webhook.allowPrivateTargets,
    lookup: deps.lookup,
  });
  const secret = generateSecret();
  const id = newId('endpoint');
  const row = await insertRecorded(
    deps,
    {
      ...scope,
      id,
      sealedSecret: seal(deps, secret, id),
      settings: {
        ...settings,
        url: url.href,
        headers: sealHeaders(headers, id, ringOf(deps)),
        api_version: settings.api_version ?? LATEST_API_VERSION,
      },
    },
    actor,
  );
  if (!row) throw endpointLimitReached();
  return { ...toEndpointRecord(row, ringOf(deps)), secret };
}

export async function getEndpoint(deps: EndpointDeps, scope: EndpointScope, id: string): Promise<EndpointRecord> {
  const row = ENDPOINT_ID.test(id) ? await endpoints.findEndpoint(deps.pool, scope, id) : undefined;
  if (!row) throw endpointMissing(id);
  return toEndpointRecord(row, ringOf(deps));
}

export async function listEndpoints(
  deps: EndpointDeps,
  scope: EndpointScope,
  page: { limit: number; startingAfter?: string },
): Promise<Page<EndpointRecord>> {
  const cursor = page.startingAfter;
  const result =
    cursor === undefined || ENDPOINT_ID.test(cursor)
      ? await endpoints.listEndpoints(deps.pool, scope, page)
      : undefined;
  if (!result) throw endpointMissing(cursor ?? '', 'starting_after');
  return { data: result.rows.map((row) => toEndpointRecord(row, ringOf(deps))), hasMore: result.hasMore };
}

export async function deleteEndpoint(
  deps: EndpointDeps,
  scope: EndpointScope,
  id: string,
  actor: AuditActor,
): Promise<void> {
  const deleted =
    ENDPOINT_ID.test(id) &&
    (await withTransaction(deps.pool, async (tx) => {
      const row = await endpoints.lockEndpoint(tx, scope, id);
      if (!row || !(await endpoints.softDeleteEndpoint(tx, scope, id))) return false;
      await recordEndpointChange(tx, row, 'endpoint.deleted', actor);
      return true;
    }));
  if (!deleted) throw endpointMissing(id);
}

/** The new secret is returned once; the old one keeps signing until the grace ends (receivers switch over). */
export async function rotateEndpointSecret(
  deps: EndpointDeps,
  scope: EndpointScope,
  id: string,
  actor: AuditActor,
  options: { expiresInSeconds?: number } = {},
): Promise<EndpointWithSecret> {
  const graceMs =
    options.expiresInSeconds === undefined
      ? deps.config.webhook.secretRotationGraceMs
      : options.expiresInSeconds * 1000;
  const secret = generateSecret();
  const row = ENDPOINT_ID.test(id)
    ? await withTransaction(deps.pool, async (tx) => {
        const rotated = await endpoints.rotateEndpointSecret(tx, scope, id, {
          sealedSecret: seal(deps, secret, id),
          graceMs,
        });
        if (rotated) await recordEndpointChange(tx, rotated, 'endpoint.secret_rotated', actor);
        return rotated;
      })
    : undefined;
  if (!row) throw endpointMissing(id);
  return { ...toEndpointRecord(row, ringOf(deps)), secret };
}

/** A registered, enabled endpoint of this account and mode, for deliveries a merchant asks for. */
export async function findUsableEndpoint(
  pool: Pool,
  scope: EndpointScope,
  id: string,
  param?: string,
): Promise<EndpointRow> {
  const row = ENDPOINT_ID.test(id) ? await endpoints.findEndpoint(pool, scope, id) : undefined;
  if (!row) throw endpointMissing(id, param);
  if (row.disabled) {
    throw new ApiError(
      'endpoint_disabled',
      `The endpoint ${row.id} is disabled; enable it first.`,
      param ? { param } : {},
    );
  }
  return row;
}

/**
 * The stored headers a change starts from. Headers no key opens cannot be changed (SecretUnavailableError); a
 * change of origin alone then stores none, so they can never reach the new origin if the key comes back.
 */
function openedForChange(stored: string, id: string, deps: EndpointDeps, input: UpdateInput): Record<string, string> {
  try {
    return openHeaders(stored, id, ringOf(deps));
  } catch (err) {
    if (input.headers === undefined && err instanceof SecretUnavailableError) return {};
    throw err;
  }
}

/** headers: a change, where a string sets a name and null removes it; names not given stay. */
export type UpdateInput = Loose<Static<typeof EndpointUpdateBody>>;

/** How often an update of url or headers starts again when another request changed them in between. */
const CONCURRENT_CHANGE_ROUNDS = 5;

/**
 * PATCH /v1/webhooks/:id with registration's checks. A URL on another origin drops the hidden headers unless the
 * same change sets them again (endpoint-headers.ts: headersForUrlChange); the API, the CLI and the developers page
 * all change endpoints here. Disabling ends its pending deliveries (their ladders stop
 * at their next attempt); enabling again replays nothing (that is recover) and keeps a failing mark until a
 * delivery succeeds.
 */
export async function updateEndpoint(
  deps: EndpointDeps,
  scope: EndpointScope,
  id: string,
  input: UpdateInput,
  actor: AuditActor,
): Promise<EndpointRecord> {
  const settings = checkedSettings(input);
  const change: endpoints.EndpointChange = { settings, disabled: input.disabled };
  if (input.url !== undefined) {
    const url = await checkWebhookUrl(input.url, {
      allowPrivateTargets: deps.config.webhook.allowPrivateTargets,
      lookup: deps.lookup,
    });
    settings.url = url.href;
  }
  const changedUrl = settings.url as string | undefined;
  if (!ENDPOINT_ID.test(id)) throw endpointMissing(id);
  if (input.headers === undefined && changedUrl === undefined) {
    const row = await updateRecorded(deps, scope, id, change, actor, false);
    if (!row) throw endpointMissing(id);
    return toEndpointRecord(row, ringOf(deps));
  }
  // The url and headers are computed from what is stored and written only while it is still that: a request
  // that changed either meanwhile makes this one start again from the new state, a bounded number of times.
  for (let round = 0; round < CONCURRENT_CHANGE_ROUNDS; round++) {
    const current = await endpoints.findEndpoint(deps.pool, scope, id);
    if (!current) throw endpointMissing(id);
    const basedSettings = { ...settings };
    const based: endpoints.EndpointChange = {
      ...change,
      settings: basedSettings,
      basedOn: { url: current.url, storedHeaders: current.stored_headers },
    };
    // Hidden headers do not follow the URL to another origin unless this request sets them again.
    const newUrl = changedUrl ?? current.url;
    let headersChanged = false;
    if (input.headers !== undefined || new URL(newUrl).origin !== new URL(current.url).origin) {
      const opened = openedForChange(current.stored_headers, id, deps, input);
      const kept = headersForUrlChange(opened, current.url, newUrl);
      const headers = input.headers === undefined ? kept : applyHeaderChange(kept, input.headers);
      const sealed = sealHeaders(headers, id, ringOf(deps));
      basedSettings.headers = sealed;
      // Headers no key opens read as none: storing none instead is a change too.
      const unreadable = !hasAny(opened) && current.stored_headers !== sealed;
      headersChanged = unreadable || !sameHeaders(opened, headers);
    }
    const row = await updateRecorded(deps, scope, id, based, actor, headersChanged);
    if (row) return toEndpointRecord(row, ringOf(deps));
  }
  throw new ApiError(
    'endpoint_changed_concurrently',
    "Another request changed this endpoint's url or headers at the same time; send the change again.",
  );
}

type EndpointHeaders = Record<string, string>;
const hasAny = (headers: EndpointHeaders) => Object.keys(headers).length > 0;
const sameHeaders = (a: EndpointHeaders, b: EndpointHeaders) =>
  JSON.stringify(Object.entries(a).sort()) === JSON.stringify(Object.entries(b).sort());
const sameSet = (a: readonly string[], b: readonly string[]) =>
  JSON.stringify([...a].sort()) === JSON.stringify([...b].sort());

/**
 * The API's names of the settings a change moved, in declaration order; the headers last, when the caller says
 * they changed (their stored form is sealed anew on every change, so the caller compares them opened): never values.
 */
function changedFields(before: EndpointRow, after: EndpointRow, headersChanged: boolean): string[] {
  const was = before as unknown as Record<string, unknown>;
  const now = after as unknown as Record<string, unknown>;
  const changed: string[] = settingsWith('update').filter((name) => {
    if ((ENDPOINT_SETTINGS[name] as EndpointSetting).special === 'headers') return false;
    const [a, b] = [was[rowField(name)], now[rowField(name)]];
    return Array.isArray(a) && Array.isArray(b) ? !sameSet(a as string[], b as string[]) : a !== b;
  });
  if (headersChanged) changed.push('headers');
  return changed;
}

/**
 * One update and its endpoint.updated entry, in one transaction, from the row as it was under its lock. A change
 * that moves nothing records nothing. Undefined: no such endpoint, or its url or headers moved since `change` was
 * computed from them (change.basedOn).
 */
function updateRecorded(
  deps: EndpointDeps,
  scope: EndpointScope,
  id: string,
  change: endpoints.EndpointChange,
  actor: AuditActor,
  headersChanged: boolean,
): Promise<EndpointRow | undefined> {
  return withTransaction(deps.pool, async (tx) => {
    const before = await endpoints.lockEndpoint(tx, scope, id);
    const row = before && (await endpoints.updateEndpoint(tx, scope, id, change));
    if (!before || !row) return undefined;
    const changes = changedFields(before, row, headersChanged);
    if (changes.length > 0) await recordEndpointChange(tx, row, 'endpoint.updated', actor, changes);
    return row;
  });
}

/** Loopback literals `listen` may register: never a name, which a resolver could point anywhere. */
const LOCAL_URL = /^https:\/\/(127\.0\.0\.1|\[::1\]):\d{1,5}\/[^\s]*$/;

/**
 * `listen` only (cli/commands/listen.ts), never the API: a test-mode endpoint on a loopback URL, pinned to the
 * session's certificate, which the worker alone then accepts without WEBHOOK_ALLOW_PRIVATE_TARGETS. It counts
 * against the test mode's endpoint limit like any other while the session runs (it is removed when it ends), so
 * `listen` cannot be used to hold more endpoints than the API allows.
 */
export async function registerLocalEndpoint(
  deps: EndpointDeps,
  input: { accountId: string; url: string; certificate: string; ordering?: EndpointOrdering },
): Promise<EndpointWithSecret> {
  if (!LOCAL_URL.test(input.url)) {
    throw new ApiError('url_not_allowed', 'A listen endpoint is https on 127.0.0.1 or [::1].', { param: 'url' });
  }
  const secret = generateSecret();
  const id = newId('endpoint');
  const row = await insertRecorded(
    deps,
    {
      id,
      accountId: input.accountId,
      livemode: false,
      sealedSecret: seal(deps, secret, id),
      certificate: input.certificate,
      settings: {
        url: input.url,
        events: [],
        description: 'parcel-webhooks listen',
        ordering: input.ordering,
        // `listen` shows what a new endpoint receives: the newest shapes.
        api_version: LATEST_API_VERSION,
      },
    },
    CLI_ACTOR,
  );
  if (!row) throw endpointLimitReached();
  return { ...toEndpointRecord(row), secret };
}
