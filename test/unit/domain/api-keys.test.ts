import { describe, expect, it } from 'vitest';
import { presentedKey } from '../../../src/api/plugins/auth';
import { toApiError } from '../../../src/api/errors';
import { parseMode } from '../../../src/core/mode';
import {
  API_KEY_PATTERN,
  generateApiKey,
  hashApiKey,
  keyLast4,
  keyMode,
  parseExpiry,
  redactedKey,
} from '../../../src/domain/api-keys';
import Fastify from 'fastify';
import fp from 'fastify-plugin';
import app from '../../../src/api/app';
import { ALL_SCOPES, parseScopes } from '../../../src/core/scopes';
import { testConfig } from '../../helpers/env';

/** The scope each route of the real app declares beside itself, as the auth plugin reads it: "METHOD url" -> scope. */
async function routeScopes(): Promise<Map<string, string | undefined>> {
  const fastify = Fastify();
  const scopes = new Map<string, string | undefined>();
  fastify.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) scopes.set(`${method} ${route.url}`, route.config?.scope);
  });
  await fastify.register(fp(app), { config: testConfig() });
  await fastify.ready();
  await fastify.close();
  return scopes;
}

describe('API keys', () => {
  it('generates svc_test_/svc_live_ + 32 base62 characters, all different', () => {
    const keys = new Set(Array.from({ length: 200 }, (_, i) => generateApiKey(i % 2 ? 'live' : 'test')));
    expect(keys.size).toBe(200);
    for (const key of keys) {
      expect(key).toMatch(API_KEY_PATTERN);
      expect(keyMode(key)).toBe(key.startsWith('svc_live_') ? 'live' : 'test');
    }
  });

  it('hashes with SHA-256 and shows only the last four', () => {
    const key = generateApiKey('test');
    expect(hashApiKey(key)).toHaveLength(32);
    expect(hashApiKey(key).equals(hashApiKey(key))).toBe(true);
    expect(keyLast4(key)).toBe(key.slice(-4));
    expect(redactedKey('live', 'abcd')).toBe('svc_live_...abcd');
  });

  it('parses modes', () => {
    expect(parseMode('test')).toBe('test');
    expect(parseMode(' LIVE ')).toBe('live');
    expect(() => parseMode('prod')).toThrow(/Invalid mode/);
  });

  it.each([
    ['2026-12-31', '2026-12-31T00:00:00.000Z'],
    ['2026-12-31T23:59:59Z', '2026-12-31T23:59:59.000Z'],
    ['2026-12-31T23:59:59', '2026-12-31T23:59:59.000Z'],
    ['2026-12-31T23:59', '2026-12-31T23:59:00.000Z'],
    ['2026-12-31T23:59:59.5+03:00', '2026-12-31T20:59:59.500Z'],
    ['2020-01-01', '2020-01-01T00:00:00.000Z'],
  ])('parses expiry %s', (input, iso) => {
    expect(parseExpiry(input).toISOString()).toBe(iso);
  });

  it.each([
    'tomorrow',
    '',
    '2026-02-30',
    '2026-13-01',
    '2026-12-31T24:00:00Z',
    '31/12/2026',
    '2026-12-31T23:59:59ZZ',
    "2026-01-01'; --",
  ])('refuses expiry %j', (input) => {
    expect(() => parseExpiry(input)).toThrow(/Invalid expiry/);
  });
});

describe('scopes', () => {
  it('parses lists and all, in the catalogue order, refusing unknown ones by name', () => {
    expect(parseScopes('all')).toEqual(ALL_SCOPES);
    expect(parseScopes('webhooks:manage, network:read,network:read')).toEqual(['network:read', 'webhooks:manage']);
    expect(() => parseScopes('network:read,root,admin')).toThrow(/"root", "admin"/);
    expect(() => parseScopes(' , ')).toThrow(/No scopes/);
  });

  it('maps routes to scopes, HEAD like GET', async () => {
    const scopes = await routeScopes();
    expect(scopes.get('GET /v1/towns')).toBe('network:read');
    expect(scopes.get('HEAD /v1/towns')).toBe('network:read');
    expect(scopes.get('DELETE /v1/webhooks/:id')).toBe('webhooks:manage');
    expect(scopes.has('GET /healthz')).toBe(true);
    expect(scopes.get('GET /healthz')).toBeUndefined();
  });
});

describe('presentedKey', () => {
  const key = generateApiKey('test');
  it('reads Bearer and Basic with an empty password', () => {
    expect(presentedKey(`Bearer ${key}`)).toBe(key);
    expect(presentedKey(`  bearer   ${key}  `)).toBe(key);
    expect(presentedKey(`Basic ${Buffer.from(`${key}:`).toString('base64')}`)).toBe(key);
  });
  it.each([undefined, '', '  '])('missing for %j', (header) => {
    expect(() => presentedKey(header)).toThrow(expect.objectContaining({ code: 'missing_api_key' }));
  });
  it.each([
    'Bearer',
    `Token ${key}`,
    `Basic ${Buffer.from(`${key}:pw`).toString('base64')}`,
    'Basic %%%',
    `Bearer ${'a'.repeat(300)}`,
  ])('malformed for %j', (header) => {
    expect(() => presentedKey(header)).toThrow(expect.objectContaining({ code: 'malformed_api_key' }));
  });
});

describe('toApiError', () => {
  it('hides unknown failures as internal_error and maps unstorable text to 400', () => {
    expect(toApiError(new Error('boom: SELECT secret')).toBody().error).toEqual({
      type: 'api_error',
      code: 'internal_error',
      message: 'Something went wrong on our side; the error has been logged.',
    });
    expect(toApiError(Object.assign(new Error('invalid byte sequence'), { code: '22021' })).code).toBe(
      'invalid_request',
    );
  });
});
