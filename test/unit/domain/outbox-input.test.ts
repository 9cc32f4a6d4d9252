import { describe, expect, it } from 'vitest';
import type { UndispatchedEvent } from '../../../db/outbox';
import { deliveryInput, firstAttemptId } from '../../../domain/outbox';
import { loadConfig } from '../../../infra/config';

const row = (endpoints: Record<string, string>): UndispatchedEvent => ({
  id: 'evt_1',
  account_id: 'acct_1',
  livemode: false,
  type: 'parcel.created',
  endpoint_ids: Object.keys(endpoints),
  delivery_ids: endpoints,
});

describe('the workflow input a dispatcher builds', () => {
  it("fixes attempt 1's id of a one-endpoint local delivery from its delivery id: the same from every dispatcher", () => {
    const input = deliveryInput(row({ we_1: 'dly_a' }), loadConfig({}));
    expect(input.attemptKind).toBe('local');
    expect(input.firstAttemptIds).toEqual({ we_1: firstAttemptId('dly_a') });
    expect(firstAttemptId('dly_a')).toMatch(/^dlv_[0-9a-f]{32}$/);
    expect(firstAttemptId('dly_a')).toBe(firstAttemptId('dly_a'));
    expect(firstAttemptId('dly_b')).not.toBe(firstAttemptId('dly_a'));
  });

  it('fixes none for a fan-out, regular activities, or an event stored without deliveries', () => {
    expect(deliveryInput(row({ we_1: 'dly_a', we_2: 'dly_b' }), loadConfig({})).firstAttemptIds).toBeUndefined();
    expect(deliveryInput(row({ we_1: 'dly_a' }), loadConfig({ DELIVERY_ATTEMPT: 'activity' })).firstAttemptIds).toBeUndefined();
    expect(deliveryInput({ ...row({}), endpoint_ids: ['we_1'] }, loadConfig({})).firstAttemptIds).toBeUndefined();
  });
});
