import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestPage } from '../../helpers/browser';
import { createEndpoint, parcel } from '../../helpers/delivery';
import { testConfig } from '../../helpers/env';
import { createAccount } from '../../helpers/fixtures';
import { useDashboardHarness } from '../../helpers/harness';
import { waitFor } from '../../helpers/wait';

/**
 * The overview, an endpoint's chart and the events list against the real app after real deliveries through a
 * worker to an HTTPS receiver: one endpoint that answers, one that fails once then answers, one that fails until
 * its delivery is abandoned. `UPDATE_SCREENSHOTS=1` writes endpoint-chart.png, overview.png and
 * overview-phone.png to docs/screenshots.
 */

const INTERNAL_TOKEN = 'internal-token-for-chart-tests-0123456';
const UPDATE = process.env.UPDATE_SCREENSHOTS === '1';
const OUT = UPDATE
  ? path.join(__dirname, '..', '..', '..', 'docs', 'screenshots')
  : mkdtempSync(path.join(os.tmpdir(), 'pw-charts-'));

describe('delivery charts and the events list in Chromium', () => {
  const config = testConfig({
    INTERNAL_API_TOKEN: INTERNAL_TOKEN,
    DELIVERY_RETRY_DELAYS: '200ms,200ms',
    DELIVERY_TIMEOUT: '2s',
    ENDPOINT_FAILING_THRESHOLD: '1',
  });
  const h = useDashboardHarness(config);
  let tab: TestPage;
  let cookies: Awaited<ReturnType<TestPage['context']['cookies']>>;
  const endpoints: Record<'orders' | 'flaky' | 'ledger', string> = { orders: '', flaky: '', ledger: '' };
  const events: Record<string, string> = {};

  const post = (url: string, body: unknown) =>
    fetch(`${h.origin}${url}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${INTERNAL_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  beforeAll(async () => {
    mkdirSync(OUT, { recursive: true });
    const accountId = await createAccount(h.tw.pool, {
      name: 'Duka Letu',
      email: 'ops@duka.example',
      status: 'active',
    });
    h.receiver.script('/flaky', (index) => ({ status: index === 0 ? 500 : 200, delayMs: 30 }));
    h.receiver.script('/ledger', { status: 500, body: '{"error":"ledger database unavailable"}' });
    h.receiver.script('/orders', { status: 200, delayMs: 60 });
    endpoints.orders = (
      await createEndpoint(h.tw.pool, { accountId, url: `${h.receiver.url}/orders`, events: ['parcel.created'] })
    ).id;
    endpoints.flaky = (
      await createEndpoint(h.tw.pool, { accountId, url: `${h.receiver.url}/flaky`, events: ['parcel.in_transit'] })
    ).id;
    endpoints.ledger = (
      await createEndpoint(h.tw.pool, { accountId, url: `${h.receiver.url}/ledger`, events: ['cod.settled'] })
    ).id;
    const publish = async (type: string, data: unknown) => {
      const response = await post('/internal/v1/events', { account_id: accountId, livemode: false, type, data });
      expect(response.status, await response.clone().text()).toBe(201);
      return ((await response.json()) as { id: string }).id;
    };
    events.created = await publish('parcel.created', {
      parcel: parcel({ id: 'parcel-1', parcel_number: 'PCL-1001', tracking_number: 'TRK-1001' }),
    });
    events.transit = await publish('parcel.in_transit', {
      parcel: parcel({ id: 'parcel-2', parcel_number: 'PCL-1002', tracking_number: 'TRK-1002' }),
    });
    events.settled = await publish('cod.settled', {
      cod_settlement: {
        id: 'cod_1',
        parcel_id: 'parcel-3',
        parcel_number: 'PCL-1003',
        amount: 350,
        currency: 'KES',
        settled_at: 1764000000,
      },
    });
    await waitFor(
      async () => {
        const { rows } = await h.tw.pool.query<{ unfinished: number }>(
          `SELECT count(*) FILTER (WHERE status = 'pending')::integer AS unfinished FROM deliveries WHERE account_id = $1`,
          [accountId],
        );
        return rows[0]?.unfinished === 0 || undefined;
      },
      { timeoutMs: 30_000, what: 'every delivery finished' },
    );
    await waitFor(
      async () =>
        (
          await h.tw.pool.query(`SELECT 1 FROM webhook_endpoints WHERE id = $1 AND status = 'failing'`, [
            endpoints.ledger,
          ])
        ).rowCount || undefined,
      { timeoutMs: 30_000, what: 'the ledger endpoint marked failing' },
    );
    const signIn = (await (await post('/internal/v1/dashboard/sessions', { account_id: accountId })).json()) as {
      url: string;
    };
    tab = await h.browser.newPage({ viewport: { width: 1280, height: 900 } });
    await tab.page.goto(signIn.url);
    await tab.page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await tab.page.waitForURL('**/dashboard/test');
    cookies = await tab.context.cookies();
  }, 90_000);
  afterAll(() => {
    if (!UPDATE) rmSync(OUT, { recursive: true, force: true });
  });

  it('the home page is the overview: failing endpoint first, each with its success rate and a sparkline', async () => {
    const { page } = tab;
    await page.goto(`${h.origin}/dashboard/test`);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Overview');
    expect(await page.getByRole('link', { name: 'Overview' }).getAttribute('aria-current')).toBe('page');
    const items = page.locator('.overview-item');
    await expect.poll(() => items.count()).toBe(3);
    expect(await items.nth(0).textContent()).toContain('/ledger');
    expect(await items.nth(0).textContent()).toContain('Failing');
    expect(await items.nth(0).locator('dd').nth(1).textContent()).toBe('0%');
    const rates = Object.fromEntries(
      await Promise.all(
        [0, 1, 2].map(async (i) => [
          ((await items.nth(i).getByRole('link').textContent()) ?? '').split('/').pop(),
          await items.nth(i).locator('dd').nth(1).textContent(),
        ]),
      ),
    );
    expect(rates).toEqual({ ledger: '0%', flaky: '50.0%', orders: '100%' });
    const sparkline = page.getByRole('img', { name: /\/ledger: 3 attempts in the last 24 hours, 3 failed/ });
    expect(await sparkline.count()).toBe(1);
    // The other sections stay one click away.
    for (const name of ['API keys', 'Webhooks', 'Events'])
      expect(await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name }).count()).toBe(1);
    await page.screenshot({ path: path.join(OUT, 'overview.png'), animations: 'disabled', caret: 'hide' });
    const phone = await h.browser.newPage({ viewport: { width: 390, height: 844 } });
    await phone.context.addCookies(cookies);
    await phone.page.goto(`${h.origin}/dashboard/test`);
    const overflow = await phone.page.evaluate(() => {
      const doc = (
        globalThis as unknown as { document: { documentElement: { scrollWidth: number; clientWidth: number } } }
      ).document;
      return doc.documentElement.scrollWidth - doc.documentElement.clientWidth;
    });
    expect(overflow).toBeLessThanOrEqual(0);
    await phone.page.screenshot({
      path: path.join(OUT, 'overview-phone.png'),
      fullPage: true,
      animations: 'disabled',
      caret: 'hide',
    });
    expect(phone.errors).toEqual([]);
    expect(tab.errors).toEqual([]);
  });

  it("an endpoint's chart shows a failed attempt and an abandonment, with its text alternative", async () => {
    const { page } = tab;
    await page.goto(`${h.origin}/dashboard/test/endpoints/${endpoints.ledger}`);
    const chart = page.getByRole('img', { name: 'Delivery attempts per hour, last 24 hours' });
    expect(await chart.count()).toBe(1);
    expect(await page.locator('#health-chart-summary').textContent()).toMatch(
      /^In the last 24 hours, 3 attempts: 0 succeeded \(0%\), 2 failed and were retried, 1 abandoned\. Response time: median \d+ ms/,
    );
    expect(await chart.locator('rect.bar-failed').count()).toBe(1);
    expect(await chart.locator('rect.bar-abandoned').count()).toBe(1);
    expect(await chart.locator('rect.bar-succeeded').count()).toBe(0);
    // The table: every hour of the day, empty ones as zeros (the attempts took under a minute: one or two hours).
    await page.getByText('Show the numbers as a table').click();
    const rows = page.locator('#health-chart table tbody tr');
    expect(await rows.count()).toBe(24);
    const counts = await Promise.all(
      [...Array(24).keys()].map(async (i) => (await rows.nth(i).locator('td').allTextContents()).map(Number)),
    );
    expect(counts.reduce((sum, row) => sum.map((value, i) => value + (row[i] ?? 0)), [0, 0, 0])).toEqual([0, 2, 1]);
    expect(counts.filter((row) => row.every((value) => value === 0)).length).toBeGreaterThanOrEqual(22);

    await page.goto(`${h.origin}/dashboard/test/endpoints/${endpoints.flaky}`);
    expect(await page.locator('.stats dd').first().textContent()).toBe('50.0%');
    expect(
      await page
        .getByRole('img', { name: /last 24 hours/ })
        .locator('rect.bar-succeeded')
        .count(),
    ).toBe(1);
    await page.locator('#delivery-health').scrollIntoViewIfNeeded();
    await page.screenshot({ path: path.join(OUT, 'endpoint-chart.png'), animations: 'disabled', caret: 'hide' });
    expect(tab.errors).toEqual([]);
  });

  it('switches between the last 24 hours and the last 7 days with two links', async () => {
    const { page } = tab;
    await page.goto(`${h.origin}/dashboard/test/endpoints/${endpoints.orders}`);
    const day = page.getByRole('link', { name: 'Last 24 hours' });
    const week = page.getByRole('link', { name: 'Last 7 days' });
    expect(await day.getAttribute('aria-current')).toBe('page');
    expect(await week.getAttribute('aria-current')).toBeNull();
    await week.click();
    await page.waitForURL(/window=7d/);
    expect(await page.getByRole('link', { name: 'Last 7 days' }).getAttribute('aria-current')).toBe('page');
    expect(await page.getByRole('img', { name: 'Delivery attempts per hour, last 7 days' }).count()).toBe(1);
    expect(await page.locator('#health-chart table tbody tr').count()).toBe(168);
    expect(await page.locator('#health-chart-summary').textContent()).toMatch(
      /^In the last 7 days, 1 attempt: 1 succeeded \(100%\)/,
    );
    await page.getByRole('link', { name: 'Last 24 hours' }).click();
    await page.waitForURL((url) => !url.search.includes('window'));
    expect(await page.locator('#health-chart table tbody tr').count()).toBe(24);
  });

  it("labels hours in the reader's time zone while the hours stay UTC hours", async () => {
    const context = await h.browser.browser.newContext({
      timezoneId: 'Asia/Kolkata',
      locale: 'en-GB',
      viewport: { width: 1280, height: 900 },
    });
    try {
      await context.addCookies(cookies);
      const page = await context.newPage();
      await page.goto(`${h.origin}/dashboard/test/endpoints/${endpoints.ledger}`);
      const labels = await page.locator('#health-chart text[data-hour]').allTextContents();
      expect(labels.length).toBeGreaterThanOrEqual(3);
      // UTC 00:00, 06:00, ... are 05:30, 11:30, ... in India.
      for (const label of labels) expect(label).toMatch(/^(05|11|17|23):30$/);
      // ICU may name the zone by its older name.
      expect(await page.locator('[data-zone-note]').textContent()).toMatch(/Asia\/(Kolkata|Calcutta)/);
      const utc = await h.browser.newPage();
      await utc.context.addCookies(cookies);
      await utc.page.goto(`${h.origin}/dashboard/test/endpoints/${endpoints.ledger}`);
      for (const label of await utc.page.locator('#health-chart text[data-hour]').allTextContents())
        expect(label).toMatch(/^(00|06|12|18):00$/);
    } finally {
      await context.close();
    }
  });

  it('the events list shows each state and parcel number, and filters and finds events', async () => {
    const { page } = tab;
    await page.goto(`${h.origin}/dashboard/test/events`);
    const row = (id: string) => page.getByRole('row').filter({ hasText: id });
    expect(await row(events.created!).textContent()).toContain('Delivered');
    expect(await row(events.created!).textContent()).toContain('PCL-1001');
    expect(await row(events.transit!).textContent()).toContain('Delivered');
    expect(await row(events.settled!).textContent()).toContain('Abandoned');
    expect(await row(events.settled!).textContent()).toContain('PCL-1003');

    await page.getByLabel('Delivery').selectOption('not_delivered');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/delivery_state=not_delivered/);
    expect(await page.locator('tbody tr').count()).toBe(1);
    expect(await row(events.settled!).count()).toBe(1);

    for (const [q, id] of [
      ['TRK-1002', events.transit],
      ['parcel-1', events.created],
      ['PCL-1003', events.settled],
      [events.created, events.created],
    ] as const) {
      await page.goto(`${h.origin}/dashboard/test/events`);
      await page.getByLabel('Event or parcel').fill(q as string);
      await page.getByRole('button', { name: 'Filter' }).click();
      await page.waitForURL(/q=/);
      expect(await page.locator('tbody tr').count(), q).toBe(1);
      expect(await row(id as string).count(), q).toBe(1);
    }
    await page.getByLabel('Event or parcel').fill('PCL-none');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/q=PCL-none/);
    expect(await page.getByText('No test event matches PCL-none.').count()).toBe(1);
    expect(tab.errors).toEqual([]);
  });
});
