import { existsSync } from 'node:fs';
import { chromium, type Browser, type BrowserContext, type ConsoleMessage, type Page } from 'playwright-core';

/** Debian's Chromium (package `chromium`): Playwright's own browser download cannot work here. */
export const CHROMIUM_PATH = '/usr/bin/chromium';

/** Quiet, offline, no GPU: nothing in a test run phones home or waits on a network it does not have. */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface BrowserHarness {
  browser: Browser;
  /** A fresh context (its own cookies), with the console and page errors collected. */
  newPage(options?: { viewport?: { width: number; height: number }; baseURL?: string }): Promise<TestPage>;
  close(): Promise<void>;
}

export interface TestPage {
  page: Page;
  context: BrowserContext;
  /** Console errors and uncaught exceptions, CSP violations among them. */
  errors: string[];
}

/**
 * Launches Debian's Chromium headless. Playwright gives every launch a fresh profile (--user-data-dir in a
 * new temporary folder) and removes it on close. Always close it (afterAll), even after a failed test: a
 * leftover Chromium holds memory the next files need.
 */
export async function launchBrowser(): Promise<BrowserHarness> {
  if (!existsSync(CHROMIUM_PATH)) {
    // scripts/test.js installs it; this is for a test run started another way.
    throw new Error(
      `Chromium is missing at ${CHROMIUM_PATH}: install it with \`apt-get install -y chromium\` (or run \`npm test\` as root)`,
    );
  }
  const browser = await chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: CHROMIUM_ARGS,
    timeout: 60_000,
  });
  const contexts: BrowserContext[] = [];
  return {
    browser,
    async newPage(options = {}) {
      const context = await browser.newContext({
        viewport: options.viewport ?? { width: 1280, height: 800 },
        baseURL: options.baseURL,
        locale: 'en-GB',
        timezoneId: 'UTC',
      });
      contexts.push(context);
      const page = await context.newPage();
      const errors: string[] = [];
      page.on('console', (message: ConsoleMessage) => {
        if (message.type() === 'error') errors.push(message.text());
      });
      page.on('pageerror', (error) => errors.push(error.message));
      return { page, context, errors };
    },
    async close() {
      await Promise.allSettled(contexts.map((context) => context.close()));
      await browser.close();
    },
  };
}

/** Bytes the page moved over the network, per response, measured from Chromium's own resource timings. */
export async function transferredBytes(
  page: Page,
): Promise<{ total: number; resources: { name: string; bytes: number }[] }> {
  // Runs in the page; the repository compiles without DOM types, so the timings are described here.
  interface Timing {
    name: string;
    transferSize: number;
    encodedBodySize: number;
  }
  return page.evaluate(() => {
    const perf = (globalThis as unknown as { performance: { getEntriesByType(type: string): Timing[] } }).performance;
    const entries = [...perf.getEntriesByType('navigation'), ...perf.getEntriesByType('resource')].map((entry) => ({
      name: new URL(entry.name).pathname,
      bytes: entry.transferSize || entry.encodedBodySize,
    }));
    return { total: entries.reduce((sum, entry) => sum + entry.bytes, 0), resources: entries };
  });
}

/**
 * Signs a page in as a person does: open the link (which changes nothing), press its Sign in button, land on
 * the developers page.
 */
export async function signInWithLink(page: Page, url: string): Promise<void> {
  await page.goto(url);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  // Signing in lands on the overview; the tests start from the keys.
  await page.waitForURL('**/dashboard/test');
  await page.getByRole('link', { name: 'API keys' }).click();
  await page.waitForURL('**/dashboard/test/keys');
}
