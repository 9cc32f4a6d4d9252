import { createHash } from 'node:crypto';
import { randomBase62 } from './ids';

export type KeyMode = 'test' | 'live';

/** DESIGN.md: `svc_test_` or `svc_live_` + 32 characters [A-Za-z0-9]; anything else is malformed. */
export const API_KEY_PATTERN = /^svc_(test|live)_[A-Za-z0-9]{32}$/;

export function generateApiKey(mode: KeyMode): string {
  return `svc_${mode}_${randomBase62(32)}`;
}

export function hashApiKey(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest();
}

export function keyMode(key: string): KeyMode | undefined {
  const match = API_KEY_PATTERN.exec(key);
  return match ? (match[1] as KeyMode) : undefined;
}
