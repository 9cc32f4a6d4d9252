import { ApiError } from '../core/errors';
import { newId } from '../core/ids';
import type { Pool } from './pool';

export type AccountStatus = 'pending' | 'active' | 'suspended';
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

interface AccountRow {
  id: string;
  name: string;
  email: string | null;
  status: AccountStatus;
  created_at: Date;
  updated_at: Date;
}

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

const COLUMNS = 'id, name, email, status, created_at, updated_at';
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export function parseAccountStatus(input: string): AccountStatus {
  const status = input.trim().toLowerCase();
  if ((ACCOUNT_STATUSES as readonly string[]).includes(status)) return status as AccountStatus;
  throw new ApiError('parameter_invalid', `Invalid status ${JSON.stringify(input)}: use ${ACCOUNT_STATUSES.join(', ')}.`, {
    param: 'status',
  });
}

export async function createAccount(
  pool: Pool,
  input: { name: string; email?: string; status?: AccountStatus },
): Promise<Account> {
  const name = input.name.trim();
  if (name === '' || name.length > 200) {
    throw new ApiError('parameter_invalid', 'The account name must be 1 to 200 characters.', { param: 'name' });
  }
  const email = input.email?.trim() || null;
  if (email !== null && (email.length > 254 || !EMAIL.test(email))) {
    throw new ApiError('parameter_invalid', `Invalid email ${JSON.stringify(input.email)}.`, { param: 'email' });
  }
  const { rows } = await pool.query<AccountRow>(
    `INSERT INTO accounts (id, name, email, status) VALUES ($1, $2, $3, $4) RETURNING ${COLUMNS}`,
    [newId('account'), name, email, input.status ?? 'pending'],
  );
  return toAccount(rows[0] as AccountRow);
}

export async function getAccount(pool: Pool, id: string): Promise<Account> {
  const { rows } = await pool.query<AccountRow>(`SELECT ${COLUMNS} FROM accounts WHERE id = $1`, [id]);
  if (!rows[0]) throw new ApiError('resource_missing', `No such account: ${JSON.stringify(id)}.`, { param: 'account' });
  return toAccount(rows[0]);
}

/**
 * approve: pending (or suspended) -> active; suspend: any -> suspended. Takes effect on the next request,
 * since authentication reads the account's status every time.
 */
export async function setAccountStatus(pool: Pool, id: string, status: AccountStatus): Promise<Account> {
  const { rows } = await pool.query<AccountRow>(
    `UPDATE accounts SET status = $2, updated_at = CASE WHEN status = $2 THEN updated_at ELSE now() END
      WHERE id = $1 RETURNING ${COLUMNS}`,
    [id, status],
  );
  if (!rows[0]) throw new ApiError('resource_missing', `No such account: ${JSON.stringify(id)}.`, { param: 'account' });
  return toAccount(rows[0]);
}

export async function listAccounts(pool: Pool): Promise<Account[]> {
  const { rows } = await pool.query<AccountRow>(`SELECT ${COLUMNS} FROM accounts ORDER BY created_at DESC, id DESC`);
  return rows.map(toAccount);
}
