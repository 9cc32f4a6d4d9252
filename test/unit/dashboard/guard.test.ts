import type { RouteOptions } from 'fastify';
import { describe, expect, it } from 'vitest';
import { accessOf, checkDeclaredAccess } from '../../../src/dashboard/guard';

describe("the developers page's guard: what a route asks of a request", () => {
  it('reads as declared (public by default); every other method is a change, whatever its route declares', () => {
    expect(accessOf('GET', undefined)).toBe('public');
    expect(accessOf('GET', 'page')).toBe('page');
    expect(accessOf('HEAD', 'page')).toBe('page');
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE', 'QUERY']) {
      for (const declared of [undefined, 'public', 'page', 'action'] as const)
        expect(accessOf(method, declared), `${method} ${declared}`).toBe('action');
      expect(accessOf(method, 'sign-in')).toBe('sign-in');
      expect(accessOf(method, 'sign-out')).toBe('sign-out');
    }
  });

  it('refuses at registration a changing route declared a mere page', () => {
    const route = (method: string | string[], dashboard?: string) =>
      ({ method, url: '/dashboard/:mode/x', config: dashboard ? { dashboard } : {} }) as unknown as RouteOptions;
    expect(() => checkDeclaredAccess(route('POST', 'page'))).toThrow(/cannot be declared 'page'/);
    expect(() => checkDeclaredAccess(route(['GET', 'DELETE'], 'public'))).toThrow(/cannot be declared 'public'/);
    expect(() => checkDeclaredAccess(route('POST'))).not.toThrow();
    expect(() => checkDeclaredAccess(route('POST', 'sign-out'))).not.toThrow();
    expect(() => checkDeclaredAccess(route('GET', 'page'))).not.toThrow();
  });
});
