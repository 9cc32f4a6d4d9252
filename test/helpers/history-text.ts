/**
 * A workflow history as plain text with every payload's bytes spelled out (as UTF-8 and as base64), so a value
 * inside an input, a result, a failure or a summary is found by a substring search.
 */
export function historyText(history: unknown): string {
  return JSON.stringify(decoded(history));
}

function decoded(value: unknown): unknown {
  if (value instanceof Uint8Array) {
    const bytes = Buffer.from(value);
    return [bytes.toString('utf8'), bytes.toString('base64')];
  }
  if (Array.isArray(value)) return value.map(decoded);
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([key, field]) => [key, decoded(field)]));
  return value;
}
