import { describe, expect, it } from 'vitest';
import { PAGE_ACTIONS_PER_MINUTE, spendPageAction } from '../../../src/dashboard/actions';

describe("a developers-page session's budget of changes", () => {
  it(`allows ${PAGE_ACTIONS_PER_MINUTE} a minute, says when to retry, and opens again when the minute is over`, () => {
    const session = `unit-${Math.random()}`;
    const start = 1_000_000;
    for (let i = 0; i < PAGE_ACTIONS_PER_MINUTE; i += 1) spendPageAction(session, start + i * 100);
    let refused: unknown;
    try {
      spendPageAction(session, start + 20_000);
    } catch (err) {
      refused = err;
    }
    expect(refused).toMatchObject({ code: 'rate_limited', status: 429, headers: { 'retry-after': '40' } });
    expect((refused as Error).message).toMatch(/at most 30 a minute\. Nothing was changed; try again in 40 seconds/);
    expect(() => spendPageAction(`${session}-other`, start + 20_000)).not.toThrow();
    expect(() => spendPageAction(session, start + 60_000)).not.toThrow();
  });
});
