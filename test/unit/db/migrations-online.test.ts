import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { MIGRATIONS_DIR } from '../../../src/db/migrate';

/**
 * Migrations run on big, busy tables without locking out writes. Every migration from the big-table indexes on
 * may only use statements that take no lock a writer waits on for long: indexes are created and dropped
 * CONCURRENTLY (in a migration that runs outside a transaction, which that needs), constraints are added NOT VALID
 * and validated apart, and nothing rewrites or locks a table. The migrations before it ran while the tables were
 * small; they are listed here by name so no new one joins them unchecked.
 */

const APPLIED_WHILE_SMALL = [
  '1763683200000_initial-schema.sql',
  '1763683200100_seed-towns.sql',
  '1763683200200_deliveries.sql',
  '1763683200400_endpoint-health.sql',
  '1763683200500_dashboard-sessions.sql',
  '1763780000000_attempt-claims.sql',
  '1763780000100_recovery-and-listen.sql',
  '1763780000200_retention.sql',
  '1763780000300_outbox.sql',
  '1763780000400_attempt-claims-per-run.sql',
  '1763780000500_sign-in-retention.sql',
  '1763780000600_delivery-outbox.sql',
  '1763780000800_session-idle-timeout.sql',
  '1763780000900_endpoint-rate-limits.sql',
  '1763780001000_parcel-ordering.sql',
  '1763780001100_event-filters.sql',
  '1763780001110_delivery-hourly-stats.sql',
];

/** The up part of a migration: a .sql file's text before `-- Down Migration`, a .js file's `exports.up`. */
function upPart(name: string, text: string): string {
  if (name.endsWith('.sql')) return text.split(/^\s*--[\s-]*down\s+migration/im)[0] ?? text;
  const start = text.indexOf('exports.up');
  const end = text.indexOf('exports.down');
  return start < 0 ? text : text.slice(start, end > start ? end : undefined);
}

/** What in one migration would lock writers out of a big table; empty when it is safe to run online. */
function lockingStatements(name: string, text: string): string[] {
  const up = upPart(name, text).replace(/^\s*--.*$/gm, '');
  const problems: string[] = [];
  const rule = (pattern: RegExp, why: string) => {
    for (const match of up.matchAll(pattern)) problems.push(`${why}: ${match[0].replace(/\s+/g, ' ').trim()}`);
  };
  // A table the same migration creates is empty and nobody else's yet: its indexes lock no writer out.
  const created = new Set([...up.matchAll(/CREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?(\w+)/gi)].map((m) => m[1]!));
  for (const match of up.matchAll(/CREATE\s+(UNIQUE\s+)?INDEX\s+(?!CONCURRENTLY)[^;`]*/gi)) {
    const table = /\bON\s+(?:ONLY\s+)?(\w+)/i.exec(match[0])?.[1];
    if (table === undefined || !created.has(table))
      problems.push(`an index built without CONCURRENTLY blocks writes: ${match[0].replace(/\s+/g, ' ').trim()}`);
  }
  rule(/DROP\s+INDEX\s+(?!CONCURRENTLY)[^;`]*/gi, 'an index dropped without CONCURRENTLY blocks reads and writes');
  rule(
    /ADD\s+(CONSTRAINT\s+\w+\s+)?(FOREIGN\s+KEY|CHECK)\b(?![^;`]*NOT\s+VALID)[^;`]*/gi,
    'a constraint added without NOT VALID scans the table under lock',
  );
  rule(/ALTER\s+COLUMN\s+\w+\s+(SET\s+DATA\s+)?TYPE\b[^;`]*/gi, 'a column type change rewrites the table');
  rule(
    /ALTER\s+COLUMN\s+\w+\s+SET\s+NOT\s+NULL[^;`]*/gi,
    'SET NOT NULL scans the table under lock (add a NOT VALID check instead)',
  );
  rule(
    /\b(VACUUM\s+FULL|CLUSTER|LOCK\s+TABLE|REINDEX\s+(?!.*CONCURRENTLY))[^;`]*/gi,
    'locks the table for its whole run',
  );
  rule(
    /ADD\s+(CONSTRAINT\s+\w+\s+)?(PRIMARY\s+KEY|UNIQUE)\s*\((?![^;`]*USING\s+INDEX)[^;`]*/gi,
    'a key built in place blocks writes (build its index CONCURRENTLY, then USING INDEX)',
  );
  if (/CONCURRENTLY/i.test(up) && !(name.endsWith('.js') && /noTransaction\(\)/.test(up))) {
    problems.push('CONCURRENTLY cannot run in a transaction: the migration must be .js and call pgm.noTransaction()');
  }
  return problems;
}

describe('migrations run online on big tables', () => {
  const files = readdirSync(MIGRATIONS_DIR)
    .filter((f) => /^\d+_.+\.(sql|js)$/.test(f))
    .sort();

  it('the migrations that ran while the tables were small are exactly the known ones, first', () => {
    expect(files.slice(0, APPLIED_WHILE_SMALL.length)).toEqual(APPLIED_WHILE_SMALL);
    expect(files.length).toBeGreaterThan(APPLIED_WHILE_SMALL.length);
  });

  it('every later migration takes no lock that holds writers up', () => {
    for (const file of files.slice(APPLIED_WHILE_SMALL.length)) {
      expect({
        file,
        problems: lockingStatements(file, readFileSync(path.join(MIGRATIONS_DIR, file), 'utf8')),
      }).toEqual({ file, problems: [] });
    }
  });

  it('the check finds the statements that would lock writers out', () => {
    const flagged = (name: string, text: string) => lockingStatements(name, text).length;
    expect(flagged('x.sql', 'CREATE INDEX a ON events (type);')).toBe(1);
    expect(flagged('x.sql', 'CREATE UNIQUE INDEX a ON events (type);')).toBe(1);
    expect(flagged('x.sql', 'DROP INDEX a;')).toBe(1);
    expect(
      flagged('x.sql', 'ALTER TABLE deliveries ADD CONSTRAINT f FOREIGN KEY (event_id) REFERENCES events (id);'),
    ).toBe(1);
    expect(flagged('x.sql', 'ALTER TABLE deliveries ADD CHECK (attempts >= 0);')).toBe(1);
    expect(flagged('x.sql', 'ALTER TABLE events ALTER COLUMN created TYPE numeric;')).toBe(1);
    expect(flagged('x.sql', 'ALTER TABLE events ALTER COLUMN parcel_id SET NOT NULL;')).toBe(1);
    expect(flagged('x.sql', 'ALTER TABLE events ADD PRIMARY KEY (id);')).toBe(1);
    // an index on a table the migration itself creates locks nobody out; on another table it does
    expect(flagged('x.sql', 'CREATE TABLE audit (id text); CREATE INDEX a ON audit (id);')).toBe(0);
    expect(flagged('x.sql', 'CREATE TABLE audit (id text); CREATE INDEX a ON events (id);')).toBe(1);
    // CONCURRENTLY inside a .sql migration runs in its transaction and fails
    expect(flagged('x.sql', 'CREATE INDEX CONCURRENTLY a ON events (type);')).toBe(1);
    expect(flagged('x.js', "exports.up = (pgm) => { pgm.sql('CREATE INDEX CONCURRENTLY a ON events (type)'); };")).toBe(
      1,
    );
    expect(
      flagged(
        'x.js',
        "exports.up = (pgm) => { pgm.noTransaction(); pgm.sql('CREATE INDEX CONCURRENTLY a ON events (type)'); pgm.sql('DROP INDEX CONCURRENTLY IF EXISTS b'); };\n" +
          "exports.down = (pgm) => { pgm.sql('DROP INDEX a'); };",
      ),
    ).toBe(0);
    expect(
      flagged(
        'x.sql',
        'ALTER TABLE deliveries ADD CONSTRAINT f FOREIGN KEY (event_id) REFERENCES events (id) NOT VALID;',
      ),
    ).toBe(0);
    expect(flagged('x.sql', 'ALTER TABLE events ADD COLUMN note text;')).toBe(0);
  });
});
