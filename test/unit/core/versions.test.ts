import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Compile } from 'typebox/compile';
import { describe, expect, it } from 'vitest';
import { EVENT_TYPES } from '../../../src/core/event-catalog';
import { exampleEvent } from '../../../src/core/event-schemas';
import {
  API_VERSIONS,
  API_VERSION_NAMES,
  changesSince,
  eventSchemaIn,
  exampleEventIn,
  LATEST_API_VERSION,
  renderEvent,
  renderForVersion,
  upgradeData,
  type ApiVersion,
  type VersionedEvent,
} from '../../../src/core/versions';
import { deprecationHeaders } from '../../../src/core/versions/deprecation';
import { validateEventInput } from '../../../src/domain/events';
import { sampleEventData, seededRandom } from '../../../src/domain/parcel-simulator';

const VERSIONS_DIR = path.join(__dirname, '..', '..', '..', 'src', 'core', 'versions');

/** A stored body as publishing makes it: the newest shape, `sequence` last. */
function storedBody(type: (typeof EVENT_TYPES)[number], seed: number): string {
  const data = validateEventInput({
    accountId: 'acct_1',
    livemode: false,
    type,
    data: sampleEventData(type, seededRandom(seed)),
  }).data;
  return JSON.stringify({
    id: `evt_${seed}`,
    object: 'event',
    type,
    created: 1767258000,
    data,
    livemode: false,
    sequence: seed,
  });
}

describe('API versions', () => {
  it('are dates, newest first, one file each; every version after the first says what it changed and how to go back', () => {
    expect(API_VERSION_NAMES).toEqual(['2026-12-01', '2026-11-21']);
    expect(LATEST_API_VERSION).toBe('2026-12-01');
    expect([...API_VERSION_NAMES].sort().reverse()).toEqual(API_VERSION_NAMES);
    for (const version of API_VERSIONS) {
      expect(version.name).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      expect(existsSync(path.join(VERSIONS_DIR, `${version.name}.ts`))).toBe(true);
      expect(readFileSync(path.join(VERSIONS_DIR, `${version.name}.ts`), 'utf8')).toContain(`name: '${version.name}'`);
    }
    for (const version of API_VERSIONS.slice(0, -1)) {
      expect(version.changes.length).toBeGreaterThan(0);
      expect(version.toPrevious).toBeTypeOf('function');
      for (const change of version.changes) expect(version.previousDataSchemas?.[change.type]).toBeDefined();
    }
  });

  it.each(API_VERSION_NAMES)('%s: every kind, as each version renders it, has that version’s schema', (name) => {
    for (const type of EVENT_TYPES) {
      const check = Compile(eventSchemaIn(type, name));
      const example = exampleEventIn(type, name);
      expect(check.Check(example), `${type} example: ${JSON.stringify([...check.Errors(example)])}`).toBe(true);
      for (let seed = 1; seed <= 10; seed += 1) {
        const rendered = JSON.parse(renderForVersion(storedBody(type, seed), name)) as unknown;
        expect(check.Check(rendered), `${type} seed ${seed}: ${JSON.stringify([...check.Errors(rendered)])}`).toBe(
          true,
        );
      }
      // A body of another version's shape is refused where the shapes differ.
      for (const other of API_VERSION_NAMES.filter((candidate) => candidate !== name)) {
        const differs = changesSince(name < other ? name : other).some((change) => change.type === type);
        expect(check.Check(exampleEventIn(type, other))).toBe(!differs);
      }
    }
  });

  it('renders the newest as the stored bytes themselves, and an older version with one transform', () => {
    const body = storedBody('cod.settled', 3);
    expect(renderForVersion(body, LATEST_API_VERSION)).toBe(body);
    const parcelEvent = storedBody('parcel.delivered', 3);
    expect(renderForVersion(parcelEvent, '2026-11-21')).toBe(parcelEvent);
    const older = renderForVersion(body, '2026-11-21');
    const stored = JSON.parse(body);
    expect(older).toBe(
      JSON.stringify({
        ...stored,
        data: {
          cod_settlement: {
            id: stored.data.cod_settlement.id,
            parcel_id: stored.data.parcel.id,
            parcel_number: stored.data.parcel.parcel_number,
            amount: stored.data.cod_settlement.amount,
            currency: stored.data.cod_settlement.currency,
            settled_at: stored.data.cod_settlement.settled_at,
          },
        },
      }),
    );
    // The envelope keeps its place and its sequence in every version.
    expect(Object.keys(JSON.parse(older))).toEqual(Object.keys(stored));
  });

  it('brings a publisher’s older shape to the newest, and back again unchanged', () => {
    const older = exampleEventIn('cod.settled', '2026-11-21') as unknown as VersionedEvent;
    const upgraded = upgradeData('cod.settled', older.data, '2026-11-21');
    expect(upgraded).toEqual(exampleEvent('cod.settled').data);
    expect(renderEvent({ ...older, data: upgraded }, '2026-11-21')).toEqual(older);
    // Fields the schema does not name travel both ways.
    const withNote = { cod_settlement: { ...(older.data.cod_settlement as object), note: 'x' } };
    expect(
      renderEvent({ ...older, data: upgradeData('cod.settled', withNote, '2026-11-21') }, '2026-11-21').data,
    ).toEqual(withNote);
  });

  it('lists what changed between a version and the newest', () => {
    expect(changesSince(LATEST_API_VERSION)).toEqual([]);
    expect(changesSince('2026-11-21')).toEqual([
      { version: '2026-12-01', type: 'cod.settled', summary: expect.stringContaining('data.parcel') },
    ]);
  });
});

describe('deprecation headers', () => {
  const withSunset = (sunset: string | null): ApiVersion[] =>
    API_VERSIONS.map((v) => (v.name === '2026-11-21' ? { ...v, sunset } : v));

  it('are absent until a sunset date is set, and never on the newest', () => {
    for (const name of API_VERSION_NAMES) expect(deprecationHeaders(name)).toEqual({});
    expect(deprecationHeaders(LATEST_API_VERSION, withSunset('2027-12-01'))).toEqual({});
  });

  it('name the successor’s day as the deprecation (RFC 9745) and the sunset as an HTTP date (RFC 8594)', () => {
    expect(deprecationHeaders('2026-11-21', withSunset('2027-12-01'))).toEqual({
      deprecation: `@${Date.UTC(2026, 11, 1) / 1000}`,
      sunset: 'Wed, 01 Dec 2027 00:00:00 GMT',
    });
  });

  it('a version is served at least 12 months after its successor', () => {
    API_VERSIONS.forEach((version, index) => {
      if (version.sunset === null) return;
      const successor = API_VERSIONS[index - 1];
      expect(successor, `${version.name} has a sunset but no successor`).toBeDefined();
      const earliest = new Date(`${successor!.name}T00:00:00Z`);
      earliest.setUTCFullYear(earliest.getUTCFullYear() + 1);
      expect(Date.parse(`${version.sunset}T00:00:00Z`)).toBeGreaterThanOrEqual(earliest.getTime());
    });
  });
});
