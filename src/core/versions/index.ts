import type { TSchema } from 'typebox';
import type { EventType } from '../event-catalog';
import { eventDataSchema, eventSchema, exampleEvent, type EventBody } from '../event-schemas';
import { VERSION_2026_11_21 } from './2026-11-21';
import { VERSION_2026_12_01 } from './2026-12-01';
import type { ApiVersion, VersionedEvent } from './types';

export type { ApiVersion, KindChange, VersionedEvent } from './types';

/**
 * API versions, newest first. An event is stored once, in the newest version's shape; a version is a date and a
 * pure transform of its shapes back to the version before it, so rendering version V walks back from the newest
 * through every version after V. Additive changes (a new field, a new kind) need no version; a change that
 * breaks a receiver adds one (docs/versioning.md).
 */
export const API_VERSIONS: readonly ApiVersion[] = [VERSION_2026_12_01, VERSION_2026_11_21];

export const LATEST_API_VERSION = API_VERSIONS[0]!.name;
export const API_VERSION_NAMES: readonly string[] = API_VERSIONS.map((version) => version.name);

export function isApiVersion(value: string): boolean {
  return API_VERSION_NAMES.includes(value);
}

/** The versions newer than `name`, newest first: the ones whose transforms render an event in `name`. */
function versionsAfter(name: string): readonly ApiVersion[] {
  const index = API_VERSION_NAMES.indexOf(name);
  return index < 0 ? API_VERSIONS.slice(0, -1) : API_VERSIONS.slice(0, index);
}

/**
 * An event of the newest shape in version `name` (one no longer served renders as the oldest served); whatever
 * else it carries besides the envelope is kept, so it comes back as the type it went in as.
 */
export function renderEvent<E extends { type: string; data: object }>(event: E, name: string): E {
  let rendered = event as unknown as VersionedEvent;
  for (const version of versionsAfter(name)) rendered = version.toPrevious ? version.toPrevious(rendered) : rendered;
  return rendered as unknown as E;
}

/**
 * The bytes posted to an endpoint on version `name`, from the stored body: the newest is the stored bytes as they
 * are (no parse, no copy); an older version parses once and serialises its rendering, unless no transform changed
 * the event (a kind the versions in between left alone), which is the stored bytes again.
 */
export function renderForVersion(storedBody: string, name: string): string {
  if (name === LATEST_API_VERSION || versionsAfter(name).every((version) => !version.toPrevious)) return storedBody;
  const stored = JSON.parse(storedBody) as VersionedEvent;
  const rendered = renderEvent(stored, name);
  return rendered === stored ? storedBody : JSON.stringify(rendered);
}

/** A kind's `data` schema in version `name`. */
export function dataSchemaIn(type: EventType, name: string): TSchema {
  let schema = eventDataSchema(type);
  for (const version of versionsAfter(name)) schema = version.previousDataSchemas?.[type] ?? schema;
  return schema;
}

/** A kind's whole body in version `name`, as an endpoint on that version receives it. */
export function eventSchemaIn(type: EventType, name: string): TSchema {
  return eventSchema(type, dataSchemaIn(type, name));
}

/** The example body of a kind (core/event-schemas.ts) in version `name`. */
export function exampleEventIn(type: EventType, name: string): EventBody {
  return renderEvent(exampleEvent(type), name);
}

/**
 * Publish data in version `name`'s shape brought to the newest, walking forward through the versions after it.
 * Data already in the newest shape is returned as it is.
 */
export function upgradeData(type: EventType, data: Record<string, unknown>, name: string): Record<string, unknown> {
  let upgraded = data;
  for (const version of [...versionsAfter(name)].reverse())
    upgraded = version.fromPrevious ? version.fromPrevious(type, upgraded) : upgraded;
  return upgraded;
}

/** What changed between version `name` and the newest, newest change first: the developers page lists it. */
export function changesSince(name: string): { version: string; type: EventType; summary: string }[] {
  return versionsAfter(name).flatMap((version) =>
    version.changes.map((change) => ({ version: version.name, ...change })),
  );
}

/** A kind as an older version shows it, where it differs from the newest: what differs, its schema and example. */
export interface OlderRendering {
  version: string;
  /** The changes since that version to this kind, newest first. */
  differences: string[];
  schema: TSchema;
  example: EventBody;
}

/** Each older version in which a kind differs from the newest, newest first: the catalogs list these. */
export function olderRenderings(type: EventType): OlderRendering[] {
  return API_VERSION_NAMES.slice(1).flatMap((name) => {
    const differences = changesSince(name)
      .filter((change) => change.type === type)
      .map((change) => `${change.version}: ${change.summary}`);
    return differences.length === 0
      ? []
      : [{ version: name, differences, schema: eventSchemaIn(type, name), example: exampleEventIn(type, name) }];
  });
}
