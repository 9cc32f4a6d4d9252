import { API_VERSIONS } from './index';
import type { ApiVersion } from './types';

/** Midnight UTC of a YYYY-MM-DD day, in Unix seconds. */
function dayStart(day: string): number {
  return Date.parse(`${day}T00:00:00Z`) / 1000;
}

/**
 * The headers that tell a receiver its version is going away: `Deprecation` (RFC 9745: `@` and the Unix time it
 * was deprecated, the day its successor was introduced) and `Sunset` (RFC 8594: the HTTP date from which it is no
 * longer served). Only on a version with a successor whose sunset date is set; otherwise none.
 */
export function deprecationHeaders(
  name: string,
  versions: readonly ApiVersion[] = API_VERSIONS,
): Record<string, string> {
  const index = versions.findIndex((version) => version.name === name);
  const version = versions[index];
  const successor = index > 0 ? versions[index - 1] : undefined;
  if (!version || !successor || version.sunset === null) return {};
  return {
    deprecation: `@${dayStart(successor.name)}`,
    sunset: new Date(dayStart(version.sunset) * 1000).toUTCString(),
  };
}
