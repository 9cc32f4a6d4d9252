import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useDashboardHarness } from '../../helpers/harness';
import type { BrowserHarness } from '../../helpers/browser';
import { parcel } from '../../helpers/delivery';
import { testConfig } from '../../helpers/env';
import { createAccount } from '../../helpers/fixtures';
import type { Receiver } from '../../helpers/receiver';
import type { TestWorker } from '../../helpers/temporal';
import { waitFor } from '../../helpers/wait';

/**
 * The README's screenshots, taken from the real app with a merchant's usual state: two keys (one in use),
 * a healthy endpoint and a failing one with its notification, deliveries of both, one event's attempts. Every run renders them (and
 * fails on a console error); `UPDATE_SCREENSHOTS=1 npm test -- test/integration/dashboard/screenshots` writes them to
 * docs/screenshots.
 */

const INTERNAL_TOKEN = 'internal-token-for-dashboard-screens';
const UPDATE = process.env.UPDATE_SCREENSHOTS === '1';
const OUT = UPDATE
  ? path.join(__dirname, '..', '..', '..', 'docs', 'screenshots')
  : mkdtempSync(path.join(os.tmpdir(), 'pw-shots-'));

describe('developers page screenshots', () => {
  const config = testConfig({
    INTERNAL_API_TOKEN: INTERNAL_TOKEN,
    DELIVERY_RETRY_DELAYS: '200ms,200ms',
    DELIVERY_TIMEOUT: '2s',
    ENDPOINT_FAILING_THRESHOLD: '1',
  });
  const h = useDashboardHarness(config);
  let tw: TestWorker;
  let origin: string;
  let browser: BrowserHarness;
  let receiver: Receiver;
  beforeAll(() => {
    ({ tw, origin, browser, receiver } = h);
    mkdirSync(OUT, { recursive: true });
  });
  afterAll(async () => {
    if (!UPDATE) rmSync(OUT, { recursive: true, force: true });
  });

  const post = (url: string, body: unknown) =>
    fetch(`${origin}${url}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${INTERNAL_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  it('renders the main pages of a merchant with keys, endpoints and deliveries', async () => {
    const accountId = await createAccount(tw.pool, { name: 'Duka Letu', email: 'ops@duka.example', status: 'active' });
    const { page, errors } = await browser.newPage({ viewport: { width: 1280, height: 860 } });
    const shot = async (name: string, options: { fullPage?: boolean } = {}) => {
      await page.screenshot({
        path: path.join(OUT, `${name}.png`),
        fullPage: options.fullPage ?? false,
        animations: 'disabled',
        caret: 'hide',
      });
      expect(statSync(path.join(OUT, `${name}.png`)).size).toBeLessThan(300_000);
    };

    const signIn = (await (await post('/internal/v1/dashboard/sessions', { account_id: accountId })).json()) as {
      url: string;
    };
    await page.goto(signIn.url);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    // Signing in lands on the overview; the tour starts from the keys.
    await page.waitForURL('**/dashboard/test');
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.waitForURL('**/dashboard/test/keys');

    // Keys: the current one in use, its replacement just created (shown once).
    const createKey = async (description: string) => {
      await page.getByLabel('Description').fill(description);
      await page.getByRole('button', { name: 'Create key' }).click();
      return page.getByRole('textbox', { name: 'New key' }).inputValue();
    };
    const current = await createKey('Checkout server');
    await fetch(`${origin}/v1/towns?limit=1`, { headers: { authorization: `Bearer ${current}` } });
    await createKey('Checkout server (replacement)');
    await shot('keys');

    // Endpoints: one healthy, one answering 500 until it is marked failing.
    receiver.script('/ledger', { status: 500, body: '{"error":"ledger database unavailable"}' });
    for (const [url, description] of [
      [`${receiver.url}/orders`, 'Order status updates'],
      [`${receiver.url}/ledger`, 'COD ledger'],
    ] as const) {
      await page.getByRole('link', { name: 'Webhooks' }).click();
      await page.getByLabel('Endpoint URL').fill(url);
      await page.getByLabel('Description').fill(description);
      await page.getByRole('button', { name: 'Add endpoint' }).click();
      await page.getByRole('textbox', { name: 'Signing secret' }).waitFor();
    }
    for (const type of ['parcel.created', 'parcel.in_transit', 'parcel.delivered']) {
      expect(
        (
          await post('/internal/v1/events', {
            account_id: accountId,
            livemode: false,
            type,
            data: { parcel: parcel() },
          })
        ).status,
      ).toBe(201);
    }
    await waitFor(
      async () =>
        (
          await tw.pool.query(`SELECT 1 FROM webhook_endpoints WHERE account_id = $1 AND status = 'failing'`, [
            accountId,
          ])
        ).rowCount,
      { timeoutMs: 30_000, what: 'the ledger endpoint marked failing' },
    );
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.waitForURL('**/dashboard/test/endpoints');
    await waitFor(async () => (await page.reload(), (await page.getByText('Failing', { exact: true }).count()) > 0), {
      what: 'the failing badge',
    });
    await shot('endpoints');

    await page
      .getByRole('link', { name: /ledger/ })
      .first()
      .click();
    await waitFor(
      async () => (await page.reload(), (await page.getByRole('heading', { name: 'Notifications' }).count()) > 0),
      {
        timeoutMs: 20_000,
        what: 'the failing notification',
      },
    );
    await shot('endpoint-failing', { fullPage: true });

    await page.getByRole('link', { name: 'Deliveries' }).click();
    await waitFor(
      async () => (await page.reload(), (await page.getByRole('row').filter({ hasText: 'Failed' }).count()) >= 3),
      {
        what: 'the failed attempts',
      },
    );
    await page
      .getByRole('row')
      .filter({ hasText: 'Failed' })
      .first()
      .getByText(/^Body, /)
      .click();
    await page.locator('.table-wrap').evaluate((element) => {
      (element as unknown as { scrollLeft: number }).scrollLeft = 0;
    });
    await page.evaluate(() => (globalThis as unknown as { scrollTo(x: number, y: number): void }).scrollTo(0, 0));
    await shot('deliveries');

    // One event: its delivery to each endpoint, every attempt, and Resend.
    await page.getByRole('row').filter({ hasText: 'Failed' }).first().getByRole('link').first().click();
    await page.waitForURL(/\/dashboard\/test\/events\/evt_/);
    await shot('event', { fullPage: true });

    const phone = await browser.newPage({ viewport: { width: 390, height: 844 } });
    await phone.context.addCookies(await page.context().cookies());
    await phone.page.goto(`${origin}/dashboard/test/keys`);
    await phone.page.screenshot({ path: path.join(OUT, 'keys-phone.png'), animations: 'disabled' });

    const signedOut = await browser.newPage({ viewport: { width: 900, height: 520 } });
    await signedOut.page.goto(signIn.url);
    await signedOut.page.screenshot({ path: path.join(OUT, 'sign-in-link-used.png') });

    expect(errors).toEqual([]);
    expect(phone.errors).toEqual([]);
  }, 120_000);
});
