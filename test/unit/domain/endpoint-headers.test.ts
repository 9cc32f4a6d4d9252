import { describe, expect, it } from 'vitest';
import { applyHeaderChange, headersForUrlChange, isHiddenHeader } from '../../../src/domain/endpoint-headers';

/** The header rules on their own: which names are hidden, which refused, and what follows a URL change. */
describe('endpoint headers', () => {
  it.each([
    'Authorization',
    'proxy-authorization',
    'Cookie',
    'X-Api-Key',
    'X-Auth-Token',
    'X-Client-Secret',
    'X-Password',
    'X-Auth',
    'X-OAuth-Client',
  ])('hides %s', (name) => expect(isHiddenHeader(name)).toBe(true));

  it.each(['X-Route', 'X-Team', 'Accept', 'Set-Cookie-Like'])('shows %s', (name) =>
    expect(isHiddenHeader(name)).toBe(false),
  );

  it.each(['Keep-Alive', 'upgrade', 'EXPECT', 'te', 'Trailer', 'Proxy-Authorization', 'Proxy-Connection', 'Host'])(
    'refuses %s with header_not_allowed',
    (name) => {
      expect(() => applyHeaderChange({}, { [name]: 'v' })).toThrow(
        expect.objectContaining({ code: 'header_not_allowed' }),
      );
    },
  );

  const current = { 'X-Route': 'eu-1', Authorization: 'Bearer a', 'X-Api-Key': 'k', Cookie: 'c=1' };

  it('keeps every header on the same origin, whatever the path or query', () => {
    expect(headersForUrlChange(current, 'https://a.example/x', 'https://a.example:443/y?z=1')).toEqual(current);
  });

  it.each([
    ['host', 'https://b.example/x'],
    ['port', 'https://a.example:8443/x'],
    ['scheme', 'http://a.example/x'],
  ])('drops the hidden headers on another %s, keeping the others', (_, to) => {
    expect(headersForUrlChange(current, 'https://a.example/x', to)).toEqual({ 'X-Route': 'eu-1' });
  });
});
