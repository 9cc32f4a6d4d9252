import { ApiError } from '../core/errors';
import { newId } from '../core/ids';
import * as accounts from '../db/accounts';
import type { AccountRow, AccountStatus } from '../db/accounts';
import type { Pool } from '../db/pool';

/**
 * Merchant accounts: the one owner of their rules, for the CLI today and a developers page later.
 * A pending account may use test keys; approval (active) lets its live keys work; suspension refuses every key.
 */

export type { AccountStatus };
export const ACCOUNT_STATUSES: readonly AccountStatus[] = ['pending', 'active', 'suspended'];

export interface Account {
  id: string;
  object: 'account';
  name: string;
  email: string | null;
  status: AccountStatus;
  created_at: string;
  updated_at: string;
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

function toAccount(row: AccountRow): Account {
  return {
    id: row.id,
    object: 'account',
    name: row.name,
    email: row.email,
    status: row.status,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

function accountMissing(id: string): ApiError {
  return new ApiError('resource_missing', `No such account: ${JSON.stringify(id)}.`, { param: 'account' });
}

export function parseAccountStatus(input: string): AccountStatus {
  const status = input.trim().toLowerCase();
  if ((ACCOUNT_STATUSES as readonly string[]).includes(status)) return status as AccountStatus;
  throw new ApiError(
    'parameter_invalid',
    `Invalid status ${JSON.stringify(input)}: use ${ACCOUNT_STATUSES.join(', ')}.`,
    {
      param: 'status',
    },
  );
}

/** A new account is pending (the default) or already approved; never born suspended. */
export async function createAccount(
  pool: Pool,
  input: { name: string; email?: string; status?: string },
): Promise<Account> {
  const status = parseAccountStatus(input.status ?? 'pending');
  if (status === 'suspended') {
    throw new ApiError('parameter_invalid', 'An account cannot be created suspended: use pending or active.', {
      param: 'status',
    });
  }
  const name = input.name.trim();
  if (name === '' || name.length > 200) {
    throw new ApiError('parameter_invalid', 'The account name must be 1 to 200 characters.', { param: 'name' });
  }
  const email = input.email?.trim() || null;
  if (email !== null && (email.length > 254 || !EMAIL.test(email))) {
    throw new ApiError('parameter_invalid', `Invalid email ${JSON.stringify(input.email)}.`, { param: 'email' });
  }
  return toAccount(await accounts.insertAccount(pool, { id: newId('account'), name, email, status }));
}

export async function getAccount(pool: Pool, id: string): Promise<Account> {
  const row = await accounts.findAccount(pool, id);
  if (!row) throw accountMissing(id);
  return toAccount(row);
}

/**
 * approve: pending (or suspended) -> active; suspend: any -> suspended. Takes effect on the next request,
 * since authentication reads the account's status every time.
 */
export async function setAccountStatus(pool: Pool, id: string, status: AccountStatus): Promise<Account> {
  const row = await accounts.updateAccountStatus(pool, id, status);
  if (!row) throw accountMissing(id);
  return toAccount(row);
}

export async function listAccounts(pool: Pool): Promise<Account[]> {
  return (await accounts.listAccounts(pool)).map(toAccount);
}
