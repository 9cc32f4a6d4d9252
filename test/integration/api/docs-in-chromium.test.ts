import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOCS_CONTENT_SECURITY_POLICY } from '../../../src/api/plugins/docs';
import { apiFixture, type ApiFixture } from '../../helpers/api';
import { launchBrowser, type BrowserHarness } from '../../helpers/browser';

/** /docs (Swagger UI) shares the developers page's origin: it carries the page headers and a policy it renders under. */
describe('API docs page', () => {
  let f: ApiFixture;
  let app: FastifyInstance;
  let origin: string;
  let browser: BrowserHarness;
  beforeAll(async () => {
    f = await apiFixture();
    app = f.app;
    origin = await app.listen({ port: 0, host: '127.0.0.1' });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await f?.close();
  });

  it('sends the security headers on the page and on its static files', async () => {
    for (const url of [
      '/docs',
      '/docs/',
      '/docs/static/swagger-ui-bundle.js',
      '/docs/static/swagger-initializer.js',
      '/docs/json',
    ]) {
      const response = await app.inject({ url });
      expect(response.statusCode, url).toBeLessThan(400);
      expect(response.headers['content-security-policy'], url).toBe(DOCS_CONTENT_SECURITY_POLICY);
      expect(response.headers['x-frame-options'], url).toBe('DENY');
      expect(response.headers['x-content-type-options'], url).toBe('nosniff');
      expect(response.headers['referrer-policy'], url).toBe('same-origin');
    }
    // The API's own routes keep their JSON answers without a page policy.
    expect((await app.inject({ url: '/healthz' })).headers['content-security-policy']).toBeUndefined();
  });

  it('renders in Chromium under that policy: the title and the operations, and no violation', async () => {
    const { page, errors } = await browser.newPage();
    const response = await page.goto(`${origin}/docs/`);
    expect(response?.headers()['content-security-policy']).toBe(DOCS_CONTENT_SECURITY_POLICY);
    await page
      .locator('.swagger-ui .info .title')
      .filter({ hasText: 'Parcel Webhooks API' })
      .waitFor({ timeout: 30_000 });
    await expect.poll(() => page.locator('.opblock').count(), { timeout: 30_000 }).toBeGreaterThan(5);
    // An operation opens (the page's scripts and styles work), still without a violation.
    await page.locator('.opblock-summary').first().click();
    await page.locator('.opblock-body').first().waitFor({ timeout: 30_000 });
    expect(errors).toEqual([]);
  }, 90_000);
});
