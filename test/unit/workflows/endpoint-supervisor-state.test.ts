import { describe, expect, it } from 'vitest';
import { classifyError } from '../../../infra/http-client';
import { formatDuration } from '../../../core/durations';
import { EndpointSupervisorState } from '../../../workflows/endpoint-supervisor';

describe('EndpointSupervisorState', () => {
  it('marks failing once, at the threshold, and remembers where the episode began', () => {
    const state = new EndpointSupervisorState(3);
    expect([state.abandon('evt_1'), state.abandon('evt_2'), state.abandon('evt_3'), state.abandon('evt_4')]).toEqual([false, false, true, false]);
    expect(state.snapshot()).toEqual({ abandoned: 4, failing: true, episodeStartEventId: 'evt_1' });
    expect(state.idle).toBe(false);
  });

  it('uses the threshold each abandoned event was published with, not the one it was started with', () => {
    const state = new EndpointSupervisorState(5);
    expect([state.abandon('evt_1', 2), state.abandon('evt_2', 2)]).toEqual([false, true]);
    expect(state.threshold).toBe(2);
    // A signal sent before the threshold was carried keeps the current one.
    expect(state.abandon('evt_3')).toBe(false);
    expect(state.threshold).toBe(2);
  });

  it('a success clears the count, the mark and the episode', () => {
    const state = new EndpointSupervisorState(3, { abandoned: 2, failing: false, episodeStartEventId: 'evt_a' });
    state.succeed();
    expect(state.snapshot()).toEqual({ abandoned: 0, failing: false, episodeStartEventId: null });
    expect(state.idle).toBe(true);
    expect(state.abandon('evt_b')).toBe(false);
    expect(state.episodeStartEventId).toBe('evt_b');
    expect(state.handled).toBe(2);
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
    expect([10_000, 60_000, 600_000, 3_600_000, 21_600_000, 1_500].map(formatDuration)).toEqual(['10s', '1m', '10m', '1h', '6h', '1500ms']);
  });
});
