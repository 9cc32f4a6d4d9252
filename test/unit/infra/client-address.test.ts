import { describe, expect, it } from 'vitest';
import { clientLimitKey } from '../../../src/infra/client-address';

describe('clientLimitKey', () => {
  it('keeps an IPv4 address as it is', () => {
    expect(clientLimitKey('203.0.113.7')).toBe('203.0.113.7');
  });

  it('counts an IPv4-mapped IPv6 address as its IPv4 address', () => {
    expect(clientLimitKey('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(clientLimitKey('::FFFF:cb00:7107')).toBe('203.0.113.7');
  });

  it('counts IPv6 addresses under their /64', () => {
    const a = clientLimitKey('2001:db8:1:2::1');
    const b = clientLimitKey('2001:0db8:0001:0002:ffff:eeee:dddd:cccc');
    expect(a).toBe('2001:db8:1:2::/64');
    expect(b).toBe(a);
    expect(clientLimitKey('2001:db8:1:3::1')).not.toBe(a);
    expect(clientLimitKey('::1')).toBe('0:0:0:0::/64');
    expect(clientLimitKey('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
    expect(clientLimitKey('2001:db8:1:2:3:4:1.2.3.4')).toBe('2001:db8:1:2::/64');
  });

  it('returns anything that is not an address unchanged', () => {
    expect(clientLimitKey('not-an-address')).toBe('not-an-address');
    expect(clientLimitKey('')).toBe('');
  });
});
