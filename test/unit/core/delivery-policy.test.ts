import { describe, expect, it } from 'vitest';
import { localAttempts } from '../../../src/core/delivery-policy';

describe('localAttempts', () => {
  it('runs local attempts only in a workflow with one ladder', () => {
    expect(localAttempts(1)).toBe(true);
    expect(localAttempts(2)).toBe(false);
    expect(localAttempts(100)).toBe(false);
  });
});
