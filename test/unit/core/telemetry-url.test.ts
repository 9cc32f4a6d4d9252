import { describe, expect, it } from 'vitest';
import { telemetryUrl } from '../../../src/core/telemetry-url';

describe('telemetryUrl', () => {
  it('keeps scheme, host and port, never a path, query, fragment or userinfo', () => {
    expect(telemetryUrl('https://user:pa55@hooks.example.com:8443/hook/s3cr3t?token=abc#frag')).toBe(
      'https://hooks.example.com:8443',
    );
    expect(telemetryUrl('https://hooks.example.com/in/whsec-path')).toBe('https://hooks.example.com');
    expect(telemetryUrl('https://[::1]:9000/x?y=1')).toBe('https://[::1]:9000');
  });

  it('shows what is not an absolute URL with an origin as an empty string', () => {
    expect(telemetryUrl('')).toBe('');
    expect(telemetryUrl('/hook/s3cr3t')).toBe('');
    expect(telemetryUrl('data:text/plain,s3cr3t')).toBe('');
  });
});
