import { chmodSync, linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { generateEncryptionKey, parseEncryptionKey } from '../core/secrets';

/**
 * The development encryption key: `npm start` without WEBHOOK_SECRET_ENCRYPTION_KEYS makes one and keeps it in
 * `<PARCEL_DATA_DIR>/secret-encryption.key` (64 hex characters, mode 0600), and every later start, worker, API
 * and CLI command of the checkout reads it, so endpoint secrets are encrypted at rest from the first run. The
 * data directory is git-ignored. Production sets the variable instead (infra/config.ts refuses to start without).
 */

export const LOCAL_KEY_FILE = 'secret-encryption.key';

export function localKeyPath(dataDir: string): string {
  return path.resolve(dataDir, LOCAL_KEY_FILE);
}

/** The key in the data directory; undefined when there is none. Throws when the file holds something else. */
export function readLocalEncryptionKey(dataDir: string): Buffer | undefined {
  let text: string;
  try {
    text = readFileSync(localKeyPath(dataDir), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  const key = parseEncryptionKey(text.trim());
  if (!key) throw new Error(`${localKeyPath(dataDir)} is not a 32-byte key in hex`);
  return key;
}

/** The data directory's key, made (owner-only) on first use. Two starts racing both end up with the one file. */
export function ensureLocalEncryptionKey(dataDir: string): Buffer {
  const existing = readLocalEncryptionKey(dataDir);
  if (existing) return existing;
  mkdirSync(path.resolve(dataDir), { recursive: true, mode: 0o700 });
  // Written whole under a private name, then linked into place: a reader never sees half a key, and link
  // refuses to replace a key another start made meanwhile.
  const staging = `${localKeyPath(dataDir)}.${process.pid}.tmp`;
  writeFileSync(staging, `${generateEncryptionKey().toString('hex')}\n`, { mode: 0o600 });
  chmodSync(staging, 0o600); // the mode given on create is masked by the umask; this one is not
  try {
    linkSync(staging, localKeyPath(dataDir));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    unlinkSync(staging);
  }
  return readLocalEncryptionKey(dataDir) as Buffer;
}
