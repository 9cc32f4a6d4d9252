import { describe, expect, it, vi } from 'vitest';
import { runAttempt, workflowTry, type AttemptDeps } from '../../../src/attempt';
import type { SignAndPostInput } from '../../../src/core/delivery-contract';

/** A pool that answers the attempt's read with `row` and records every statement it is given. */
function stubPool(row: Record<string, unknown>) {
  const statements: Array<{ text: string; values: unknown[] }> = [];
  const pool = {
    async query(query: string | { text: string; values: unknown[] }, values?: unknown[]) {
      const text = typeof query === 'string' ? query : query.text;
      statements.push({ text, values: typeof query === 'string' ? (values ?? []) : query.values });
      return { rows: text.includes('take_rate_token') ? [row] : [] };
    },
  };
  return { pool, statements };
}

/** The attempt's read of an endpoint limited to 50/s: its token (or its wait) as `token` says, unclaimed. */
function limitedRow(token: Record<string, unknown>): Record<string, unknown> {
  return {
    id: 'we_limited',
    url: 'https://receiver.invalid/hooks',
    account_id: 'acct_limited',
    livemode: false,
    status: 'enabled',
    disabled: false,
    deleted: false,
    account_suspended: false,
    local_certificate: null,
    delivery_status: 'pending',
    secret: 'whsec_plain0000000000000000000000000',
    previous_secret: null,
    event_body: '{"id":"evt_limited"}',
    event_trace_parent: null,
    headers: '{}',
    api_version: '2026-12-01',
    fresh: false,
    rate_limit: 50,
    throttled_until_ms: null,
    reserved_second: null,
    granted_second: null,
    ...token,
  };
}

const input: SignAndPostInput = {
  attemptId: 'dlv_0123456789abcdef0123456789abcdef',
  endpointId: 'we_limited',
  eventId: 'evt_limited',
  eventType: 'parcel.created',
  accountId: 'acct_limited',
  livemode: false,
  attempt: 1,
  deliveryId: 'dly_limited',
  finalAttempt: false,
  timeoutMs: 10_000,
  claimTry: 0,
  notPostedRuns: [],
  reservedSecond: 1_700_000_000,
};

describe('runAttempt with a rate token', () => {
  it('a token that comes back too late in its second posts nothing, gives the claim back and keeps its place', async () => {
    // The token's second is over: whatever the clock, it is 700 ms or more into it.
    const second = Math.floor(Date.now() / 1000) - 1;
    const { pool, statements } = stubPool(limitedRow({ fresh: true, granted_second: second }));
    const deps = { config: { webhook: { secretEncryptionKeys: [] } }, pool, http: undefined } as unknown as AttemptDeps;

    const run = await runAttempt(deps, input, 'workflow');

    expect(run.kind).toBe('throttled');
    if (run.kind !== 'throttled') return;
    // Its place is the token's second: due, so its next ask is granted in the first second with a token left,
    // not queued again at the back.
    expect(run.throttle).toMatchObject({ reservedSecond: second, rateLimit: 50 });
    expect(run.run).toEqual(expect.any(String));
    const release = statements.find((s) => s.text.startsWith('DELETE FROM attempt_claims'));
    expect(release?.values).toEqual([input.attemptId, run.run]);
  });
});

describe('workflowTry with a place put off', () => {
  it('waits in itself for a place a few seconds ahead and asks again with it, instead of handing back a timer', async () => {
    vi.useFakeTimers({ now: Date.UTC(2026, 10, 27, 12, 0, 0, 0) });
    try {
      const now = Date.now();
      const throttled = (untilMs: number, second: number) =>
        limitedRow({ throttled_until_ms: untilMs, reserved_second: second });
      const answers = [throttled(now + 3_000, now / 1000 + 3), throttled(now + 60_000, now / 1000 + 60)];
      const asked: unknown[][] = [];
      const pool = {
        async query(query: { text: string; values: unknown[] }) {
          if (!query.text.includes('take_rate_token')) return { rows: [] };
          asked.push(query.values);
          return { rows: [answers[asked.length - 1]] };
        },
      };
      const deps = {
        config: { webhook: { secretEncryptionKeys: [] } },
        pool,
        http: undefined,
      } as unknown as AttemptDeps;
      const tried = workflowTry(deps, { ...input, reservedSecond: undefined });
      await vi.advanceTimersByTimeAsync(3_100);
      const outcome = await tried;
      // Asked twice: the second time with the place the first answer gave ($9, the reserved second).
      expect(asked).toHaveLength(2);
      expect(asked[1]![8]).toBe(now / 1000 + 3);
      // A place a minute out goes back to the workflow, for its timer.
      expect(outcome).toMatchObject({ kind: 'throttled', reservedSecond: now / 1000 + 60 });
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('workflowTry when the read fails', () => {
  /** A pool whose every statement fails with `err`. */
  function failingDeps(err: Error): AttemptDeps {
    const pool = {
      async query() {
        throw err;
      },
    };
    return { config: { webhook: { secretEncryptionKeys: [] } }, pool, http: undefined } as unknown as AttemptDeps;
  }
  const typeOf = async (err: Error) =>
    workflowTry(failingDeps(err), { ...input, reservedSecond: undefined }).then(
      () => 'returned',
      (failure: { type?: string }) => failure.type,
    );

  it('our database unreachable: the same attempt waits and tries again', async () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    expect(await typeOf(refused)).toBe('DatabaseUnavailable');
    const shutdown = Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' });
    expect(await typeOf(shutdown)).toBe('DatabaseUnavailable');
    expect(await typeOf(new Error('Connection terminated unexpectedly'))).toBe('DatabaseUnavailable');
  });

  it('any other error is a bug: the attempt fails (recorded internal_error by the workflow), no waiting', async () => {
    const missing = Object.assign(new Error('relation "webhook_endpoints" does not exist'), { code: '42P01' });
    expect(await typeOf(missing)).toBe('AttemptReadFailed');
    expect(await typeOf(new TypeError("Cannot read properties of undefined (reading 'url')"))).toBe(
      'AttemptReadFailed',
    );
  });
});

describe('runAttempt to a paused endpoint', () => {
  it('is held: nothing posted, nothing recorded, and the try hands back a re-check, not an attempt', async () => {
    const { pool, statements } = stubPool(limitedRow({ paused_for_ms: 40_000 }));
    const deps = { pool, config: { webhook: { secretEncryptionKeys: [] } } } as unknown as AttemptDeps;
    expect(await runAttempt(deps, input, 'workflow')).toEqual({ kind: 'held', pausedForMs: 40_000 });
    // The read is the only statement: no claim released, no skip or attempt recorded.
    expect(statements).toHaveLength(1);

    const before = Date.now();
    const outcome = await workflowTry(deps, input);
    expect(outcome).toMatchObject({ kind: 'throttled', reservedSecond: null, rateLimit: null });
    if (outcome.kind !== 'throttled') return;
    // A quarter of the 40 s paused, up to a fifth more at random.
    expect(outcome.waitMs).toBeGreaterThanOrEqual(10_000);
    expect(outcome.waitMs).toBeLessThanOrEqual(12_000);
    expect(outcome.pausedSinceMs).toBeGreaterThanOrEqual(before - 40_000 - 50);
    expect(outcome.pausedSinceMs).toBeLessThanOrEqual(Date.now() - 40_000);
  });

  it('a paused endpoint that is also disabled ends the delivery skipped instead of holding it', async () => {
    const { pool, statements } = stubPool(limitedRow({ paused_for_ms: 1_000, disabled: true, fresh: true }));
    const deps = { pool, config: { webhook: { secretEncryptionKeys: [] } } } as unknown as AttemptDeps;
    expect(await runAttempt(deps, input, 'workflow')).toEqual({ kind: 'skipped', reason: 'endpoint_disabled' });
    expect(statements.some((s) => s.text.includes("status = 'skipped'"))).toBe(true);
  });
});
