import { encryptionKeyId, resealSecret, SecretUnavailableError, type KeyRing } from '../core/secrets';
import * as endpoints from '../db/endpoints';
import type { StoredSecrets } from '../db/endpoints';
import type { Pool } from '../db/pool';
import { NO_HEADERS } from './endpoint-headers';

/**
 * `secrets reencrypt`: every endpoint's stored secrets (current and previous, deleted endpoints too) and sealed
 * custom headers moved onto the newest key of the ring, plain ones included. It walks the table by id in batches; each batch is one
 * UPDATE (its own transaction, row locks only for that moment) that replaces a row only if it still holds what
 * was read, so a rotation meanwhile wins. Deliveries keep going throughout: they open any stored form. Re-running
 * it skips rows already on the newest key, so an interrupted run is simply run again.
 */

export const REENCRYPT_BATCH_SIZE = 500;
/** Endpoint ids listed for secrets no key opens: enough to act on, bounded for a huge table. */
const UNREADABLE_SHOWN = 100;

export interface ReencryptionReport {
  /** The newest key's id: what every secret is sealed under afterwards. */
  key_id: string;
  endpoints_scanned: number;
  endpoints_reencrypted: number;
  /** Current and previous secrets moved. */
  secrets_reencrypted: number;
  /** Endpoints whose custom headers moved. */
  headers_reencrypted: number;
  endpoints_already_current: number;
  /** Changed between read and write (a rotation): left for the next run, which finds them sealed already. */
  endpoints_changed_meanwhile: number;
  /** Holding a secret or headers no key of the ring opens; listed, up to 100, in unreadable_endpoint_ids. */
  endpoints_unreadable: number;
  unreadable_endpoint_ids: string[];
  batches: number;
  /**
   * Older keys of the ring no stored secret or headers are sealed under once the run ends: safe to drop from
   * WEBHOOK_SECRET_ENCRYPTION_KEYS. Empty while any value is still in the `enc:v1` form, which names no key.
   */
  unused_key_ids: string[];
  /**
   * Older keys still sealing some secret or headers (endpoints changed meanwhile, or unreadable), with their
   * endpoint counts.
   */
  still_used_key_ids: Record<string, number>;
  /** Endpoints still holding a plain or `enc:v1` secret or headers after the run. */
  endpoints_unsealed_or_unbound: number;
}

type SecretForms = Awaited<ReturnType<typeof endpoints.countSecretForms>>;

/** Endpoints holding a plain or `enc:v1` (unbound) secret or headers: what a sealed-only ring cannot open. */
function unsealedOrUnbound(forms: SecretForms): number {
  return forms.filter((row) => !row.form.startsWith('enc:v2:')).reduce((sum, row) => sum + row.endpoints, 0);
}

/** Which older keys still seal a secret or headers, from what the table holds now. */
async function keyUse(
  pool: Pool,
  ring: KeyRing,
): Promise<Pick<ReencryptionReport, 'unused_key_ids' | 'still_used_key_ids' | 'endpoints_unsealed_or_unbound'>> {
  const forms = await endpoints.countSecretForms(pool);
  const count = (form: string) => forms.find((row) => row.form === form)?.endpoints ?? 0;
  const older = ring.slice(1).map(encryptionKeyId);
  const stillUsed = Object.fromEntries(
    older.filter((id) => count(`enc:v2:${id}`) > 0).map((id) => [id, count(`enc:v2:${id}`)]),
  );
  return {
    unused_key_ids: count('enc:v1') > 0 ? [] : older.filter((id) => !(id in stillUsed)),
    still_used_key_ids: stillUsed,
    endpoints_unsealed_or_unbound: unsealedOrUnbound(forms),
  };
}

/**
 * WEBHOOK_SECRETS_REQUIRE_SEALED, at the start of a service process: refuses (one line) while any endpoint still
 * holds a plain or unbound secret or custom headers, which the sealed-only ring could not open at delivery.
 */
export async function checkSecretsSealed(pool: Pool, ring: KeyRing): Promise<void> {
  if (!ring.sealedOnly) return;
  const unsealed = unsealedOrUnbound(await endpoints.countSecretForms(pool));
  if (unsealed === 0) return;
  throw new Error(
    `WEBHOOK_SECRETS_REQUIRE_SEALED=true but ${unsealed} endpoint(s) hold a plain or unbound secret or headers: run \`parcel-webhooks secrets reencrypt\` first`,
  );
}

interface BatchPlan {
  changes: Array<{ read: StoredSecrets; secret: string; previousSecret: string | null; headers: string }>;
  unreadable: string[];
}

function planBatch(rows: StoredSecrets[], ring: KeyRing): BatchPlan {
  const plan: BatchPlan = { changes: [], unreadable: [] };
  for (const row of rows) {
    try {
      const secret = resealSecret(row.secret, row.id, ring);
      const previous = row.previous_secret === null ? undefined : resealSecret(row.previous_secret, row.id, ring);
      const headers = row.headers === NO_HEADERS ? undefined : resealSecret(row.headers, row.id, ring);
      if (secret === undefined && previous === undefined && headers === undefined) continue;
      plan.changes.push({
        read: row,
        secret: secret ?? row.secret,
        previousSecret: previous ?? row.previous_secret,
        headers: headers ?? row.headers,
      });
    } catch (err) {
      if (!(err instanceof SecretUnavailableError)) throw err;
      plan.unreadable.push(row.id);
    }
  }
  return plan;
}

export async function reencryptSecrets(
  pool: Pool,
  ring: KeyRing,
  options: {
    batchSize?: number;
    afterBatch?: (report: ReencryptionReport, lastId: string) => void | Promise<void>;
  } = {},
): Promise<ReencryptionReport> {
  const newest = ring[0];
  if (!newest) throw new Error('no encryption key is configured: set WEBHOOK_SECRET_ENCRYPTION_KEYS (newest first)');
  const batchSize = options.batchSize ?? REENCRYPT_BATCH_SIZE;
  const report: ReencryptionReport = {
    key_id: encryptionKeyId(newest),
    endpoints_scanned: 0,
    endpoints_reencrypted: 0,
    secrets_reencrypted: 0,
    headers_reencrypted: 0,
    endpoints_already_current: 0,
    endpoints_changed_meanwhile: 0,
    endpoints_unreadable: 0,
    unreadable_endpoint_ids: [],
    batches: 0,
    unused_key_ids: [],
    still_used_key_ids: {},
    endpoints_unsealed_or_unbound: 0,
  };
  let lastId = '';
  for (;;) {
    const rows = await endpoints.listStoredSecrets(pool, lastId, batchSize);
    if (rows.length === 0) break;
    const plan = planBatch(rows, ring);
    const replaced = new Set(await endpoints.replaceStoredSecrets(pool, plan.changes));
    report.batches += 1;
    report.endpoints_scanned += rows.length;
    report.endpoints_reencrypted += replaced.size;
    for (const change of plan.changes.filter((candidate) => replaced.has(candidate.read.id))) {
      report.secrets_reencrypted +=
        Number(change.secret !== change.read.secret) + Number(change.previousSecret !== change.read.previous_secret);
      report.headers_reencrypted += Number(change.headers !== change.read.headers);
    }
    report.endpoints_changed_meanwhile += plan.changes.length - replaced.size;
    report.endpoints_already_current += rows.length - plan.changes.length - plan.unreadable.length;
    report.endpoints_unreadable += plan.unreadable.length;
    report.unreadable_endpoint_ids.push(
      ...plan.unreadable.slice(0, UNREADABLE_SHOWN - report.unreadable_endpoint_ids.length),
    );
    lastId = (rows[rows.length - 1] as StoredSecrets).id;
    await options.afterBatch?.(report, lastId);
  }
  return { ...report, ...(await keyUse(pool, ring)) };
}
