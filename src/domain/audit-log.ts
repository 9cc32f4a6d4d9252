import Type, { type Static } from 'typebox';
import { ApiError } from '../core/errors';
import { newId } from '../core/ids';
import * as audit from '../db/audit-log';
import type { AuditRow } from '../db/audit-log';
import type { Db, Pool } from '../db/pool';

/**
 * The audit log: who changed which key or endpoint. Every change is recorded by `recordAudit`, called with the
 * client of the change's own transaction, so a change that rolls back leaves no entry and an entry that cannot be
 * written fails the change. One entry per action; an update names the fields it changed, never their values, and
 * no entry holds a key, a secret or a header value.
 *
 * Who acts:
 *
 * | actor.type  | actor.id                           | through                                   |
 * |-------------|------------------------------------|-------------------------------------------|
 * | `api_key`   | the key's id (key_...)             | the API                                   |
 * | `dashboard` | the page session's id (dss_...)    | the developers page                       |
 * | `cli`       | null                               | an operator's CLI                         |
 * | `system`    | null                               | the engine itself (a 410 disables)        |
 *
 * A merchant's disable (`disabled: true`, the page's Disable button) is `endpoint.updated` with changes
 * `["disabled"]`; `endpoint.disabled` is the engine's own disable.
 */

export const AUDIT_ACTIONS = [
  'api_key.created',
  'api_key.revoked',
  'endpoint.created',
  'endpoint.updated',
  'endpoint.deleted',
  'endpoint.secret_rotated',
  'endpoint.paused',
  'endpoint.resumed',
  'endpoint.disabled',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export type AuditActor =
  | { type: 'api_key'; id: string }
  | { type: 'dashboard'; id: string }
  | { type: 'cli'; id: null }
  | { type: 'system'; id: null };

export const CLI_ACTOR: AuditActor = { type: 'cli', id: null };
export const SYSTEM_ACTOR: AuditActor = { type: 'system', id: null };
export const apiKeyActor = (keyId: string): AuditActor => ({ type: 'api_key', id: keyId });
/** `sessionId` is the session's public id (DashboardSession.id), never its cookie. */
export const dashboardActor = (sessionId: string): AuditActor => ({ type: 'dashboard', id: sessionId });

export type AuditTarget = { type: 'api_key' | 'webhook_endpoint'; id: string };

export interface AuditChange {
  accountId: string;
  livemode: boolean;
  action: AuditAction;
  actor: AuditActor;
  target: AuditTarget;
  /** endpoint.updated: the names of the fields that changed. */
  changes?: string[];
}

/** Writes the entry of one change; `tx` is the client of the change's transaction. */
export async function recordAudit(tx: Db, change: AuditChange): Promise<void> {
  await audit.insertAuditEntry(tx, {
    id: newId('auditEntry'),
    accountId: change.accountId,
    livemode: change.livemode,
    action: change.action,
    actorType: change.actor.type,
    actorId: change.actor.id,
    targetType: change.target.type,
    targetId: change.target.id,
    changes: change.changes,
  });
}

export const AuditEntryRecord = Type.Object({
  id: Type.String({ description: 'aud_...' }),
  object: Type.Literal('audit_entry'),
  action: Type.Union(
    [
      Type.Literal('api_key.created'),
      Type.Literal('api_key.revoked'),
      Type.Literal('endpoint.created'),
      Type.Literal('endpoint.updated'),
      Type.Literal('endpoint.deleted'),
      Type.Literal('endpoint.secret_rotated'),
      Type.Literal('endpoint.paused'),
      Type.Literal('endpoint.resumed'),
      Type.Literal('endpoint.disabled'),
    ],
    {
      description:
        'What was done. A merchant\'s disable is endpoint.updated (changes ["disabled"]); endpoint.disabled is the engine\'s own.',
    },
  ),
  actor: Type.Object(
    {
      type: Type.Union([
        Type.Literal('api_key'),
        Type.Literal('dashboard'),
        Type.Literal('cli'),
        Type.Literal('system'),
      ]),
      id: Type.Union([Type.String(), Type.Null()], {
        description: "The API key's id, the developers page session's id, or null for the CLI and the engine.",
      }),
    },
    { description: 'Who did it.' },
  ),
  target: Type.Object(
    {
      type: Type.Union([Type.Literal('api_key'), Type.Literal('webhook_endpoint')]),
      id: Type.String(),
    },
    { description: 'What it was done to.' },
  ),
  changes: Type.Optional(
    Type.Array(Type.String(), {
      description: 'endpoint.updated only: the names of the fields that changed (never their values).',
    }),
  ),
  created: Type.Integer({ description: 'Unix seconds.' }),
  livemode: Type.Boolean(),
});
export type AuditEntryRecord = Static<typeof AuditEntryRecord>;

function toRecord(row: AuditRow): AuditEntryRecord {
  return {
    id: row.id,
    object: 'audit_entry',
    action: row.action as AuditAction,
    actor: { type: row.actor_type, id: row.actor_id },
    target: { type: row.target_type, id: row.target_id } as AuditTarget,
    ...(row.changes ? { changes: row.changes } : {}),
    created: Math.floor(row.created_at.getTime() / 1000),
    livemode: row.livemode,
  };
}

const AUDIT_ID = /^aud_[A-Za-z0-9]{1,64}$/;

export function isAuditAction(value: string): value is AuditAction {
  return (AUDIT_ACTIONS as readonly string[]).includes(value);
}

/** Newest first, of one account and mode; `action` narrows to one kind of change. */
export async function listAuditLog(
  pool: Pool,
  scope: { accountId: string; livemode: boolean },
  page: { limit: number; startingAfter?: string; action?: string },
): Promise<{ data: AuditEntryRecord[]; hasMore: boolean }> {
  if (page.action !== undefined && !isAuditAction(page.action)) {
    throw new ApiError(
      'parameter_invalid',
      `Unknown action ${JSON.stringify(page.action.slice(0, 100))}; use one of ${AUDIT_ACTIONS.join(', ')}.`,
      { param: 'action' },
    );
  }
  const cursor = page.startingAfter;
  const result =
    cursor === undefined || AUDIT_ID.test(cursor) ? await audit.listAuditEntries(pool, scope, page) : undefined;
  if (!result) {
    const shown = (cursor ?? '').slice(0, 80);
    throw new ApiError('resource_missing', `No such audit entry: '${shown}'.`, { param: 'starting_after' });
  }
  return { data: result.rows.map(toRecord), hasMore: result.hasMore };
}
