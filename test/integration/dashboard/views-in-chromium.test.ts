import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, transferredBytes, type BrowserHarness } from '../../helpers/browser';
import { previewServer, samplePages } from '../../helpers/dashboard-fixtures';
import { loadAssets } from '../../../src/dashboard/assets';

/**
 * The views in real Chromium, from sample records: the CSP holds (no violation reaches the console), nothing
 * is wider than a phone, the keyboard reaches everything with a visible focus, and the script's copy button and
 * confirmation dialog work. The pages against the real app are in pages.test.ts.
 */
describe('developers page views in Chromium', () => {
  let browser: BrowserHarness;
  let server: Awaited<ReturnType<typeof previewServer>>;

  beforeAll(async () => {
    server = await previewServer();
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.app.close();
  });

  const names = Object.keys(samplePages(loadAssets().urls));

  it('every page fits a phone and breaks no CSP rule', async () => {
    const { page, errors } = await browser.newPage({ viewport: { width: 375, height: 812 } });
    for (const status of ['active', 'pending', 'suspended']) {
      for (const name of names) {
        const response = await page.goto(`${server.url}/preview/${name}?status=${status}`);
        expect(response?.headers()['content-security-policy']).toContain("script-src 'self'");
        const overflow = await page.evaluate(() => {
          const doc = (
            globalThis as unknown as { document: { documentElement: { scrollWidth: number; clientWidth: number } } }
          ).document;
          return doc.documentElement.scrollWidth - doc.documentElement.clientWidth;
        });
        expect(overflow, `${name} (${status}) is wider than the phone`).toBeLessThanOrEqual(0);
      }
    }
    expect(errors).toEqual([]);
  });

  it('the keyboard starts at "Skip to content" and focus is visible', async () => {
    const { page } = await browser.newPage();
    await page.goto(`${server.url}/preview/keys`);
    await page.keyboard.press('Tab');
    const skip = page.getByRole('link', { name: 'Skip to content' });
    await expect
      .poll(() => skip.evaluate((el) => el === (el.ownerDocument as { activeElement: unknown }).activeElement))
      .toBe(true);
    const outline = await skip.evaluate((el) => {
      const style = (
        el.ownerDocument.defaultView as unknown as {
          getComputedStyle(e: unknown): { outlineStyle: string; outlineWidth: string };
        }
      ).getComputedStyle(el);
      return `${style.outlineStyle} ${style.outlineWidth}`;
    });
    expect(outline).toBe('solid 3px');
    // Every form control has a name a screen reader can read.
    await page.goto(`${server.url}/preview/endpoint`);
    for (const name of ['Endpoint URL', 'Description', 'Event kind', 'From (UTC)', 'Until (UTC)', 'parcel.created']) {
      await expect.poll(() => page.getByLabel(name, { exact: false }).first().count()).toBeGreaterThan(0);
    }
  });

  it('copies a key shown once with the Copy button', async () => {
    const { page, context } = await browser.newPage();
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
    await page.goto(`${server.url}/preview/key-created`);
    await page.getByRole('button', { name: 'Copy' }).click();
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'Copied' }).count()).toBe(1);
    const copied = await page.evaluate(() =>
      (
        globalThis as unknown as { navigator: { clipboard: { readText(): Promise<string> } } }
      ).navigator.clipboard.readText(),
    );
    expect(copied).toBe('svc_test_4eC39HqLyjWDarjtT1zdp7dcQ7dX');
  });

  it('asks before revoking: Cancel posts nothing, confirming posts with confirm=yes and the CSRF token', async () => {
    const { page } = await browser.newPage();
    await page.goto(`${server.url}/preview/keys`);
    const revoke = page.getByRole('button', { name: 'Revoke key ending 3f9A' });
    await revoke.click();
    const dialog = page.getByRole('dialog', { name: 'Revoke the key ending 3f9A?' });
    await dialog.waitFor();
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'hidden' });
    expect(page.url()).toContain('/preview/keys');
    await revoke.click();
    await Promise.all([page.waitForURL('**/revoke'), dialog.getByRole('button', { name: 'Revoke' }).click()]);
    expect(JSON.parse((await page.textContent('body')) ?? '')).toEqual({
      url: '/dashboard/test/keys/key_old/revoke',
      body: { _csrf: 'csrf-token-fixture', confirm: 'yes' },
    });
  });

  it('a sign-in link opens a page whose one button posts to the link, with nothing else on it', async () => {
    const { page, errors } = await browser.newPage();
    await page.goto(`${server.url}/preview/sign-in-link`);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Sign in to the developers page');
    expect(await page.getByRole('button').count()).toBe(1);
    expect(await page.locator('script:not([src])').count()).toBe(0);
    await Promise.all([
      page.waitForURL(`**/dashboard/sign-in/${'T'.repeat(43)}`),
      page.getByRole('button', { name: 'Sign in' }).click(),
    ]);
    expect(JSON.parse((await page.textContent('body')) ?? '')).toEqual({
      url: `/dashboard/sign-in/${'T'.repeat(43)}`,
      body: {},
    });
    expect(errors).toEqual([]);
  });

  it('the first page load is small', async () => {
    const { page } = await browser.newPage();
    await page.goto(`${server.url}/preview/keys`, { waitUntil: 'load' });
    const weight = await transferredBytes(page);
    // One document, one stylesheet, one script, one icon; no font, no framework.
    expect(weight.resources.map((resource) => resource.name.replace(/-[0-9a-f]{10}/, ''))).toEqual(
      expect.arrayContaining(['/preview/keys', '/dashboard/assets/app.css', '/dashboard/assets/app.js']),
    );
    expect(weight.total).toBeLessThan(40_000);
  });
});
