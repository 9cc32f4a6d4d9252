import type { Pool } from './pool';

/** Table accounts. SQL only: the rules (names, emails, statuses) are domain/accounts.ts's. */

export type AccountStatus = 'pending' | 'active' | 'suspended';

export interface AccountRow {
  id: string;
  name: string;
  email: string | null;
  status: AccountStatus;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = 'id, name, email, status, created_at, updated_at';

export async function insertAccount(
  pool: Pool,
  row: { id: string; name: string; email: string | null; status: AccountStatus },
): Promise<AccountRow> {
  const { rows } = await pool.query<AccountRow>(
    `INSERT INTO accounts (id, name, email, status) VALUES ($1, $2, $3, $4) RETURNING ${COLUMNS}`,
    [row.id, row.name, row.email, row.status],
  );
  return rows[0] as AccountRow;
}

export async function findAccount(pool: Pool, id: string): Promise<AccountRow | undefined> {
  const { rows } = await pool.query<AccountRow>(`SELECT ${COLUMNS} FROM accounts WHERE id = $1`, [id]);
  return rows[0];
}

/** updated_at moves only when the status does. */
export async function updateAccountStatus(
  pool: Pool,
  id: string,
  status: AccountStatus,
): Promise<AccountRow | undefined> {
  const { rows } = await pool.query<AccountRow>(
    `UPDATE accounts SET status = $2, updated_at = CASE WHEN status = $2 THEN updated_at ELSE now() END
      WHERE id = $1 RETURNING ${COLUMNS}`,
    [id, status],
  );
  return rows[0];
}

export async function listAccounts(pool: Pool): Promise<AccountRow[]> {
  const { rows } = await pool.query<AccountRow>(`SELECT ${COLUMNS} FROM accounts ORDER BY created_at DESC, id DESC`);
  return rows;
}
