import { describe, expect, it } from 'vitest';
import { attemptKindFor } from '../../../core/delivery-policy';

describe('attemptKindFor', () => {
  it('runs local attempts only in a workflow with one ladder', () => {
    expect(attemptKindFor('local', 1)).toBe('local');
    expect(attemptKindFor('local', 2)).toBe('activity');
    expect(attemptKindFor('local', 100)).toBe('activity');
    expect(attemptKindFor('activity', 1)).toBe('activity');
  });
});
