import { describe, expect, it } from 'vitest';
import { classifyError } from '../../../src/infra/http-client';
import { formatDuration } from '../../../src/core/durations';
import { SUPERVISOR_RECENT_ABANDONMENTS } from '../../../src/core/delivery-policy';
import { EndpointSupervisorState } from '../../../src/workflows/endpoint-supervisor';

const answer = (streak: number, failing: boolean) => ({
  endpointGone: false,
  counted: true,
  streak,
  failing,
  notificationId: null,
});

describe('EndpointSupervisorState', () => {
  it("mirrors the database's answers, and the threshold of the last abandonment recorded", () => {
    const state = new EndpointSupervisorState(5);
    state.recorded('evt_1', 2, answer(1, false));
    state.recorded('evt_2', 2, answer(2, true));
    expect(state.snapshot()).toEqual({ abandoned: 2, failing: true });
    expect(state.threshold).toBe(2);
    expect(state.handled).toBe(2);
  });

  it('drops a repeated abandonment, counted as handled', () => {
    const state = new EndpointSupervisorState(3, undefined, ['evt_old']);
    expect(state.repeated('evt_old')).toBe(true);
    expect(state.repeated('evt_new')).toBe(false);
    state.recorded('evt_new', 3, answer(1, false));
    expect(state.repeated('evt_new')).toBe(true);
    expect(state.handled).toBe(3);
    expect(state.recentAbandonments()).toEqual(['evt_old', 'evt_new']);
  });

  it('forgets the oldest abandonments past its bound', () => {
    const recent = Array.from({ length: SUPERVISOR_RECENT_ABANDONMENTS }, (_, i) => `evt_${i}`);
    const state = new EndpointSupervisorState(3, undefined, recent);
    state.recorded('evt_last', 3, answer(1, false));
    expect(state.recentAbandonments()).toHaveLength(SUPERVISOR_RECENT_ABANDONMENTS);
    expect(state.repeated('evt_0')).toBe(false);
    expect(state.repeated('evt_last')).toBe(true);
  });

  it('a success clears the streak and the mark', () => {
    const state = new EndpointSupervisorState(3, { abandoned: 2, failing: true });
    state.succeed();
    expect(state.snapshot()).toEqual({ abandoned: 0, failing: false });
    expect(state.handled).toBe(1);
  });
});

describe('delivery error kinds', () => {
  const coded = (code: string, message = code) => Object.assign(new Error(message), { code });
  it.each([
    [coded('ECONNREFUSED'), 'connection_refused'],
    [coded('ECONNRESET'), 'connection_reset'],
    [coded('UND_ERR_SOCKET'), 'connection_reset'],
    [coded('ENOTFOUND'), 'dns'],
    [coded('UND_ERR_HEADERS_TIMEOUT'), 'timeout'],
    [Object.assign(new Error('The operation was aborted due to timeout'), { name: 'TimeoutError' }), 'timeout'],
    [coded('DEPTH_ZERO_SELF_SIGNED_CERT'), 'tls'],
    [coded('ERR_TLS_CERT_ALTNAME_INVALID'), 'tls'],
    [coded('ERR_ADDRESS_NOT_PUBLIC'), 'ssrf_blocked'],
    [Object.assign(new Error('fetch failed'), { cause: coded('ECONNREFUSED') }), 'connection_refused'],
    [new Error('something else'), 'network'],
  ])('%s -> %s', (err, kind) => {
    expect(classifyError(err)).toBe(kind);
  });

  it('formats ladder delays for summaries', () => {
    expect([10_000, 60_000, 600_000, 3_600_000, 21_600_000, 1_500].map(formatDuration)).toEqual([
      '10s',
      '1m',
      '10m',
      '1h',
      '6h',
      '1500ms',
    ]);
  });
});
