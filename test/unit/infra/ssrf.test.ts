import type { LookupAddress } from 'node:dns';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../src/core/errors';
import { checkWebhookUrl, guardedLookup, isPublicAddress, type Lookup } from '../../../src/infra/ssrf';

/** A resolver from a table; no real DNS is ever asked. */
function fakeLookup(table: Record<string, string[]>): Lookup & { calls: string[] } {
  const calls: string[] = [];
  const lookup = ((hostname, _options, callback) => {
    calls.push(hostname);
    const addresses = table[hostname];
    if (!addresses) {
      callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), []);
      return;
    }
    callback(
      null,
      addresses.map((address): LookupAddress => ({ address, family: address.includes(':') ? 6 : 4 })),
    );
  }) as Lookup & { calls: string[] };
  lookup.calls = calls;
  return lookup;
}

async function refusal(raw: string, lookup = fakeLookup({})): Promise<ApiError> {
  const error = await checkWebhookUrl(raw, { allowPrivateTargets: false, lookup }).then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(error, raw).toBeInstanceOf(ApiError);
  return error as ApiError;
}

describe('isPublicAddress', () => {
  it.each([
    '127.0.0.1',
    '127.255.255.254',
    '10.0.0.1',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.0.1',
    '169.254.169.254',
    '100.64.0.1',
    '100.127.255.255',
    '0.0.0.0',
    '0.1.2.3',
    '224.0.0.1',
    '239.255.255.250',
    '255.255.255.255',
    '240.0.0.1',
    '192.0.2.1',
    '198.51.100.7',
    '203.0.113.9',
    '198.18.0.1',
    '192.0.0.8',
    '::',
    '::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:10.0.0.1',
    '::127.0.0.1',
    'fe80::1',
    'fe80::1%eth0',
    'febf::1',
    'fc00::1',
    'fd12:3456::1',
    'ff02::1',
    '2001:db8::1',
    '3fff::1',
    '64:ff9b::7f00:1',
    '64:ff9b::a00:1',
    '64:ff9b:1::1',
    '2002:7f00:1::1',
    '2002:c0a8:101::',
    '2001::1',
    '100::1',
    '[::1]',
    'not-an-ip',
    '',
    '1.2.3',
  ])('refuses %s', (ip) => {
    expect(isPublicAddress(ip)).toBe(false);
  });

  it.each([
    '93.184.215.14',
    '8.8.8.8',
    '1.1.1.1',
    '172.32.0.1',
    '100.128.0.1',
    '192.169.0.1',
    '2606:4700:4700::1111',
    '2001:4860:4860::8888',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
    '2002:808:808::1',
    '[2606:4700::1]',
  ])('accepts %s', (ip) => {
    expect(isPublicAddress(ip)).toBe(true);
  });
});

describe('checkWebhookUrl', () => {
  it('returns the normalised URL of a public target, resolving names with every address checked', async () => {
    const lookup = fakeLookup({ 'hooks.example.com': ['93.184.215.14', '2606:4700::1'] });
    const url = await checkWebhookUrl('https://HOOKS.example.com:8443/in?x=1', { allowPrivateTargets: false, lookup });
    expect(url.href).toBe('https://hooks.example.com:8443/in?x=1');
    expect(lookup.calls).toEqual(['hooks.example.com']);
    const literal = await checkWebhookUrl('https://93.184.215.14/hook', { allowPrivateTargets: false, lookup });
    expect(literal.hostname).toBe('93.184.215.14');
    expect(lookup.calls).toHaveLength(1);
  });

  it.each([
    'http://93.184.215.14/',
    'ftp://93.184.215.14/',
    'javascript:alert(1)',
    'file:///etc/passwd',
    'wss://a.example/',
  ])('refuses %s as not https', async (raw) => {
    expect((await refusal(raw)).code).toBe('url_not_https');
  });

  it('refuses what does not parse, is too long, or does not resolve, as invalid_url', async () => {
    for (const raw of [
      '',
      'hooks',
      'https://',
      `https://93.184.215.14/${'a'.repeat(2048)}`,
      'https://nowhere.example/',
    ]) {
      const error = await refusal(raw);
      expect(error.code, raw).toBe('invalid_url');
      expect(error.extra.param).toBe('url');
    }
    expect((await refusal('https://nowhere.example/')).message).toMatch(/does not resolve/);
  });

  it('refuses what WHATWG would silently rewrite, grows past the limit once encoded, or has port 0', async () => {
    const raws = [
      'https://93.184.215.14/a\nb',
      'https://93.184.215.14/\tx',
      'https://exa\tmple.com/',
      ' https://93.184.215.14/',
      'https://93.184.215.14/ ',
      'https://93.184.215.14/\u0000',
      'https://93.184.215.14/\u007f',
      `https://93.184.215.14/${'é'.repeat(1000)}`,
      'https://93.184.215.14:0/',
    ];
    for (const raw of raws) {
      const error = await refusal(raw);
      expect(error.code, JSON.stringify(raw)).toBe('invalid_url');
      expect(error.extra.param).toBe('url');
    }
  });

  it.each([
    'https://127.0.0.1/',
    'https://2130706433/',
    'https://0x7f.1/',
    'https://017700000001/',
    'https://0x7f000001/',
    'https://127.1/',
    'https://[::1]/',
    'https://[::ffff:127.0.0.1]/',
    'https://[0:0:0:0:0:ffff:7f00:1]/',
    'https://[fe80::1]/',
    'https://[fc00::1]:8443/',
    'https://10.0.0.1/',
    'https://169.254.169.254/',
    'https://100.64.1.1/',
    'https://0.0.0.0/',
    'https://[::]/',
    'https://localhost/',
    'https://LOCALHOST./',
    'https://a.b.localhost/',
    'https://user:pw@93.184.215.14/',
    'https://user@93.184.215.14/',
    'https://93.184.215.14/#x',
    'https://93.184.215.14/#',
  ])('refuses %s as not allowed', async (raw) => {
    const error = await refusal(raw);
    expect(error.code).toBe('url_not_allowed');
    expect(error.extra.param).toBe('url');
  });

  it('refuses a name when any of its addresses is not public', async () => {
    const lookup = fakeLookup({
      'internal.example.com': ['10.1.2.3'],
      'mixed.example.com': ['93.184.215.14', '127.0.0.1'],
      'mapped.example.com': ['::ffff:192.168.1.1'],
    });
    for (const host of ['internal.example.com', 'mixed.example.com', 'mapped.example.com']) {
      expect((await refusal(`https://${host}/`, lookup)).code).toBe('url_not_allowed');
    }
  });

  it('allows private targets when configured, without resolving anything', async () => {
    const lookup = fakeLookup({});
    for (const raw of [
      'https://127.0.0.1:8443/hook',
      'https://localhost/x',
      'https://[::1]/',
      'https://receiver.internal/',
    ]) {
      await expect(checkWebhookUrl(raw, { allowPrivateTargets: true, lookup })).resolves.toBeInstanceOf(URL);
    }
    expect(lookup.calls).toEqual([]);
    await expect(checkWebhookUrl('http://127.0.0.1/', { allowPrivateTargets: true, lookup })).rejects.toMatchObject({
      code: 'url_not_https',
    });
  });
});

describe('guardedLookup', () => {
  const call = (
    lookupFn: ReturnType<typeof guardedLookup>,
    host: string,
    options: { all?: boolean; family?: number } = {},
  ) =>
    new Promise<{ err: NodeJS.ErrnoException | null; address: unknown; family?: number }>((resolve) => {
      lookupFn(host, options, (err, address, family) => resolve({ err, address, family }));
    });
  const resolver = fakeLookup({
    'public.example': ['93.184.215.14', '2606:4700::1'],
    'rebound.example': ['93.184.215.14', '169.254.169.254'],
  });

  it('answers like dns.lookup for public names, with and without all', async () => {
    const lookupFn = guardedLookup(false, resolver);
    expect(await call(lookupFn, 'public.example')).toEqual({ err: null, address: '93.184.215.14', family: 4 });
    const all = await call(lookupFn, 'public.example', { all: true });
    expect(all.err).toBeNull();
    expect(all.address).toEqual([
      { address: '93.184.215.14', family: 4 },
      { address: '2606:4700::1', family: 6 },
    ]);
  });

  it('fails the connection when a name resolves to a non-public address', async () => {
    const { err } = await call(guardedLookup(false, resolver), 'rebound.example', { all: true });
    expect(err).toMatchObject({ code: 'ERR_ADDRESS_NOT_PUBLIC', address: '169.254.169.254' });
  });

  it('passes resolver errors through, and lets private addresses through when allowed', async () => {
    expect((await call(guardedLookup(false, resolver), 'missing.example')).err).toMatchObject({ code: 'ENOTFOUND' });
    const allowed = await call(guardedLookup(true, resolver), 'rebound.example');
    expect(allowed).toEqual({ err: null, address: '93.184.215.14', family: 4 });
  });
});
