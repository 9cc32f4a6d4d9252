import type { TSchema } from 'typebox';
import type { EventType } from '../event-catalog';

/** An event body as a version renders it: the envelope, whatever else it carries kept as it is. */
export interface VersionedEvent {
  type: string;
  data: Record<string, unknown>;
  [field: string]: unknown;
}

/** One kind's change in a version, as the catalogs and the developers page list it. */
export interface KindChange {
  type: EventType;
  /** What a receiver on the version before sees differently, in one or two sentences. */
  summary: string;
}

/**
 * One API version: a date, what changed in it from the version before and why, and how to bring its newer shapes
 * back to that version (a pure function each way, so an event is stored once, in the newest shape, and each
 * delivery renders its endpoint's version by walking back through the versions in between).
 */
export interface ApiVersion {
  /** YYYY-MM-DD: the day the version was introduced. */
  name: string;
  /** Why the version exists, one paragraph; the first version is the shapes merchants started with. */
  why: string;
  changes: readonly KindChange[];
  /**
   * The day from which this version is no longer served (YYYY-MM-DD), at least 12 months after its successor;
   * null until one is chosen. Once set, every delivery on this version carries Deprecation and Sunset headers.
   */
  sunset: string | null;
  /**
   * An event of this version in the shape of the version before, or the event itself when that shape is the same
   * (then the stored bytes are posted as they are); absent for the first version.
   */
  toPrevious?: (event: VersionedEvent) => VersionedEvent;
  /** Publish data in the version before's shape (as `previousDataSchemas` accepts it), in this version's shape. */
  fromPrevious?: (type: EventType, data: Record<string, unknown>) => Record<string, unknown>;
  /** The `data` schemas of the kinds this version changed, as they were in the version before. */
  previousDataSchemas?: Partial<Record<EventType, TSchema>>;
}
