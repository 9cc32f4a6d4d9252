import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { EVENT_TYPES } from '../../../src/core/event-catalog';
import { EVENT_DOCS_PATH, renderEventDocs } from '../../../scripts/event-docs';

describe('docs/events.md', () => {
  it('is what scripts/event-docs.ts writes from the event schemas (run `npx tsx scripts/event-docs.ts` after changing them)', () => {
    expect(readFileSync(EVENT_DOCS_PATH, 'utf8')).toBe(renderEventDocs());
  });

  it('has a section, an example and a schema per event kind', () => {
    const text = renderEventDocs();
    for (const type of EVENT_TYPES) {
      expect(text).toContain(`## \`${type}\``);
      expect(text).toContain(`"type": "${type}"`);
      expect(text).toContain(`"const": "${type}"`);
    }
  });
});
