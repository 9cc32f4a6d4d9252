import { describe, expect, it } from 'vitest';
import { SEARCH_ATTRIBUTES, type DeliveryTrigger } from '../../../src/core/delivery-contract';
import {
  localAttemptTaskTimeoutMs,
  THROTTLE_HOLD_MS,
  THROTTLE_WAKE_MARGIN_MS,
  throttleWaitMs,
} from '../../../src/core/delivery-policy';
import {
  deliveryInput,
  deliveryStartOptions,
  earlyAttemptIds,
  firstAttemptId,
  type DeliveryStart,
} from '../../../src/domain/delivery-start';
import { firstAttemptId as reexported } from '../../../src/domain/outbox';
import { loadConfig } from '../../../src/infra/config';

const start = (endpoints: Record<string, string>, trigger: DeliveryTrigger = 'automatic'): DeliveryStart => ({
  eventId: 'evt_1',
  eventType: 'parcel.created',
  accountId: 'acct_1',
  livemode: false,
  trigger,
  endpointIds: Object.keys(endpoints),
  deliveryIds: endpoints,
});

const options = { taskQueue: 'deliveries', eager: true };

describe('the workflow input a dispatcher builds', () => {
  it("derives the outbox's attempt 1 id of a one-endpoint delivery from its delivery id: the same from every dispatcher", () => {
    const input = deliveryInput(start({ we_1: 'dly_a' }), loadConfig({}));
    expect(earlyAttemptIds(input)).toEqual({ we_1: firstAttemptId('dly_a') });
    // The workflow's input names no attempt: the outbox's attempt 1 rides in it as an outcome, once on record.
    expect(input.firstAttemptIds).toBeUndefined();
    expect(firstAttemptId('dly_a')).toMatch(/^dlv_[0-9a-f]{32}$/);
    expect(firstAttemptId('dly_a')).toBe(firstAttemptId('dly_a'));
    expect(firstAttemptId('dly_b')).not.toBe(firstAttemptId('dly_a'));
    expect(reexported).toBe(firstAttemptId);
  });

  it("names each endpoint's attempt 1 of a fan-out the outbox makes, and none but an ordered endpoint's or one stored without a delivery", () => {
    expect(earlyAttemptIds(deliveryInput(start({ we_1: 'dly_a', we_2: 'dly_b' }), loadConfig({})))).toEqual({
      we_1: firstAttemptId('dly_a'),
      we_2: firstAttemptId('dly_b'),
    });
    const ordered = {
      ...start({ we_1: 'dly_a', we_2: 'dly_b' }),
      parcelOrder: { parcelId: 'par_1', sequence: 2, endpointIds: ['we_2'] },
    };
    expect(earlyAttemptIds(deliveryInput(ordered, loadConfig({})))).toEqual({ we_1: firstAttemptId('dly_a') });
    expect(earlyAttemptIds(deliveryInput({ ...start({}), endpointIds: ['we_1'] }, loadConfig({})))).toEqual({});
  });
});

describe('one start for every trigger', () => {
  const config = loadConfig({ DELIVERY_TIMEOUT: '7s' });

  it('starts a publish as event:<evt_id>, its input without a trigger', () => {
    const input = deliveryInput(start({ we_1: 'dly_a' }), config);
    expect(input.trigger).toBeUndefined();
    const started = deliveryStartOptions(input, options);
    expect(started.workflowId).toBe('event:evt_1');
    expect(started.staticSummary).toBe('parcel.created evt_1 -> 1 endpoint (acct_1, test)');
  });

  for (const trigger of ['resend', 'recover', 'test'] as const) {
    it(`starts a ${trigger} delivery as delivery:<dly_id>, with the publish's task timeout and first attempt`, () => {
      const published = deliveryStartOptions(deliveryInput(start({ we_1: 'dly_a' }), config), options);
      const input = deliveryInput(start({ we_1: 'dly_r' }, trigger), config);
      expect(input).toMatchObject({ trigger });
      expect(earlyAttemptIds(input)).toEqual({ we_1: firstAttemptId('dly_r') });
      const started = deliveryStartOptions(input, options);
      expect(started.workflowId).toBe('delivery:dly_r');
      expect(started.workflowTaskTimeout).toBe(localAttemptTaskTimeoutMs(7_000));
      expect(started.workflowTaskTimeout).toBe(published.workflowTaskTimeout);
      expect(started.requestEagerStart).toBe(true);
      expect(started.typedSearchAttributes).toEqual(published.typedSearchAttributes);
      expect(started.staticSummary).toBe(`${trigger} parcel.created evt_1 -> we_1 (acct_1, test)`);
      expect(started.staticDetails).toContain(`**${trigger}** delivery \`dly_r\``);
    });
  }

  it('keeps a fan-out on regular activities with the default task timeout, searchable by every endpoint', () => {
    const started = deliveryStartOptions(deliveryInput(start({ we_1: 'dly_a', we_2: 'dly_b' }), config), options);
    expect(started.workflowTaskTimeout).toBeUndefined();
    expect(started.typedSearchAttributes).toContainEqual({
      key: SEARCH_ATTRIBUTES.endpointIds,
      value: ['we_1', 'we_2'],
    });
  });

  it('delays the start of a delivery whose attempt 1 holds a place in its rate-limit queue, never eagerly', () => {
    const now = Date.UTC(2026, 10, 27, 12, 0, 0, 0);
    const place = { untilMs: now + 3_000, reservedSecond: now / 1000 + 3, rateLimit: 50 };
    const input = { ...deliveryInput(start({ we_1: 'dly_a' }), config), firstAttemptThrottles: { we_1: place } };
    const started = deliveryStartOptions(input, options, now);
    // Half a hold early (the try waits for its second itself), as a workflow's throttle timer would.
    expect(started.startDelay).toBe(throttleWaitMs(place, now));
    expect(started.startDelay).toBe(3_000 - THROTTLE_HOLD_MS / 2 + THROTTLE_WAKE_MARGIN_MS);
    expect(started.requestEagerStart).toBeUndefined();
    expect(started.staticDetails).toContain(
      '**Attempt 1** to `we_1` throttled: waits for its rate limit (50/s) until 12:00:03',
    );
    // A Retry-After (no place, no limit) waits until its time exactly; a place already due still waits a moment.
    const retryAfter = {
      ...input,
      firstAttemptThrottles: { we_1: { untilMs: now + 2_000, reservedSecond: null, rateLimit: null } },
    };
    expect(deliveryStartOptions(retryAfter, options, now).startDelay).toBe(2_000 + THROTTLE_WAKE_MARGIN_MS);
    expect(deliveryStartOptions(retryAfter, options, now).staticDetails).toContain(
      'waits for its Retry-After until 12:00:02',
    );
    expect(deliveryStartOptions(input, options, now + 10_000).startDelay).toBe(1);
    expect(
      deliveryStartOptions(deliveryInput(start({ we_1: 'dly_a' }), config), options, now).startDelay,
    ).toBeUndefined();
  });

  it("lists a few endpoints' attempts 1 made before the start, and counts a wide fan-out's within Temporal's 20,000-byte details", () => {
    const ok = {
      kind: 'attempted',
      statusCode: 200,
      error: null,
      durationMs: 3,
      url: 'https://x',
      succeeded: true,
      recovered: false,
      recorded: true,
    } as const;
    const few = {
      ...deliveryInput(start({ we_1: 'dly_a', we_2: 'dly_b' }), config),
      firstAttemptOutcomes: { we_1: ok, we_2: { ...ok, statusCode: 500, succeeded: false } },
    };
    const details = deliveryStartOptions(few, options).staticDetails as string;
    expect(details).toContain('**Attempt 1** to `we_1`, made before the start: succeeded, HTTP 200 in 3 ms');
    expect(details).toContain('**Attempt 1** to `we_2`, made before the start: failed, HTTP 500 in 3 ms');

    const ids = Object.fromEntries(
      Array.from({ length: 200 }, (_, i) => [
        `we_${String(i).padStart(24, '0')}`,
        `dly_${String(i).padStart(32, '0')}`,
      ]),
    );
    const outcomes = Object.fromEntries(
      Object.keys(ids).map((id, i) => [
        id,
        i < 150
          ? ok
          : i < 190
            ? { ...ok, succeeded: false }
            : ({ kind: 'skipped', reason: 'endpoint_disabled' } as const),
      ]),
    );
    const wide = deliveryStartOptions({ ...deliveryInput(start(ids), config), firstAttemptOutcomes: outcomes }, options)
      .staticDetails as string;
    expect(wide).toContain(
      '**Attempts 1** to 200 endpoints, made before the start: 150 succeeded, 40 failed, 10 skipped',
    );
    expect(wide).not.toContain('**Attempt 1** to');
    expect(Buffer.byteLength(JSON.stringify(wide))).toBeLessThan(20_000);
  });

  it('fixes the max age at hand-off, counted from the stored time, and never delays a start past it', () => {
    const now = Date.UTC(2026, 10, 27, 12, 0, 0, 0);
    const aged = deliveryInput(
      { ...start({ we_1: 'dly_a' }), ageFromMs: now - 1_000 },
      loadConfig({ DELIVERY_MAX_AGE: '5s' }),
    );
    expect(aged).toMatchObject({ maxAgeMs: 5_000, ageFromMs: now - 1_000 });
    expect(deliveryInput(start({ we_1: 'dly_a' }), loadConfig({})).maxAgeMs).toBe(3 * 86_400_000);
    // A place an hour away, the delivery expiring in 4 s: the start waits 4 s, and the workflow gives up.
    const place = { untilMs: now + 3_600_000, reservedSecond: now / 1000 + 3_600, rateLimit: 1 };
    expect(deliveryStartOptions({ ...aged, firstAttemptThrottles: { we_1: place } }, options, now).startDelay).toBe(
      4_000,
    );
    expect(
      deliveryStartOptions({ ...aged, firstAttemptThrottles: { we_1: place } }, options, now + 9_000).startDelay,
    ).toBe(1);
  });

  it('refuses a merchant-asked start that does not name exactly one endpoint and its delivery', () => {
    expect(() =>
      deliveryStartOptions(deliveryInput(start({ we_1: 'dly_a', we_2: 'dly_b' }, 'resend'), config), options),
    ).toThrow(/exactly one/);
    expect(() =>
      deliveryStartOptions(deliveryInput({ ...start({}, 'test'), endpointIds: ['we_1'] }, config), options),
    ).toThrow(/exactly one/);
  });
});
