import { EVENT_TYPES, type EventType } from './event-catalog';
import { PERSONAL_PATHS } from './event-schemas';

/** What an erased personal value reads as, wherever it was kept: in the event's body and in stored answers. */
export const ERASED = '[erased]';

/** The shortest tail of a value cut off at the end of a stored answer that is still taken for the value. */
const CUT_TAIL_MIN_CHARS = 3;

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

function isEventType(type: string): type is EventType {
  return (EVENT_TYPES as readonly string[]).includes(type);
}

/**
 * An event's body with its personal fields (the schemas' mark) replaced by ERASED, and the values it held. A body
 * already erased comes back unchanged with no values. The body is re-serialised in member order, as it was
 * stored (JSON.stringify, `sequence` last), so its other bytes do not change.
 */
export function eraseEventBody(type: string, body: string): { body: string; values: string[] } {
  if (!isEventType(type)) return { body, values: [] };
  const parsed = JSON.parse(body) as Json;
  const values: string[] = [];
  for (const path of PERSONAL_PATHS[type]) {
    let node: Json | undefined = parsed;
    for (const key of path.slice(0, -1)) {
      node = node !== null && typeof node === 'object' && !Array.isArray(node) ? node[key] : undefined;
    }
    const field = path[path.length - 1] as string;
    if (node === null || typeof node !== 'object' || Array.isArray(node) || !(field in node)) continue;
    const value = node[field];
    if (value === ERASED || value === null || value === undefined) continue;
    values.push(typeof value === 'string' ? value : JSON.stringify(value));
    node[field] = ERASED;
  }
  return values.length === 0 ? { body, values } : { body: JSON.stringify(parsed), values };
}

/**
 * A stored text (a receiver's answer, first `maxChars` characters) without the given values: each replaced by
 * ERASED in its raw and its JSON-escaped spelling, and a value's head cut off at the end of the text as well.
 */
export function eraseValuesIn(text: string, values: readonly string[], maxChars: number): string {
  const spellings = [...new Set(values.flatMap((value) => [value, JSON.stringify(value).slice(1, -1)]))]
    .filter((spelling) => spelling.length > 0)
    // the longer first: a value inside another is replaced with it
    .sort((a, b) => b.length - a.length);
  let out = text;
  for (const spelling of spellings) out = out.split(spelling).join(ERASED);
  for (const spelling of spellings) {
    for (let length = spelling.length - 1; length >= CUT_TAIL_MIN_CHARS; length--) {
      if (out.endsWith(spelling.slice(0, length))) {
        out = out.slice(0, out.length - length) + ERASED;
        break;
      }
    }
  }
  return [...out].slice(0, maxChars).join('');
}
