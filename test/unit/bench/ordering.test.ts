import { describe, expect, it } from 'vitest';
import { countInversions } from '../../../bench/scenarios/ordering';

describe('bench ordering: inversions', () => {
  it('counts arrivals below a sequence already seen for the same parcel, and nothing else', () => {
    const arrivals = [
      { parcel: 'a', sequence: 1 },
      { parcel: 'b', sequence: 2 },
      { parcel: 'a', sequence: 1 }, // a retry of the same event: not an inversion
      { parcel: 'a', sequence: 3 },
      { parcel: 'b', sequence: 1 }, // below b's 2
      { parcel: 'a', sequence: 2 }, // below a's 3
      { parcel: 'a', sequence: 4 },
    ];
    expect(countInversions(arrivals)).toBe(2);
    expect(countInversions(arrivals.filter((a) => a.parcel === 'a').slice(0, 3))).toBe(0);
  });
});
