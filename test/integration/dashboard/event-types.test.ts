import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { Compile } from 'typebox/compile';
import { afterAll, describe, expect, it } from 'vitest';
import { deliveryHeaders } from '../../../src/core/delivery-headers';
import { EVENT_TYPES } from '../../../src/core/event-catalog';
import { EVENT_SCHEMAS } from '../../../src/core/event-schemas';
import { constructEvent } from '../../../src/receiver/index';
import { signInWithLink } from '../../helpers/browser';
import { createEndpoint } from '../../helpers/delivery';
import { testConfig } from '../../helpers/env';
import { createAccount } from '../../helpers/fixtures';
import { useDashboardHarness } from '../../helpers/harness';
import { waitFor } from '../../helpers/wait';

/**
 * The event catalog (/dashboard/:mode/event-types) in Chromium against the real app: every kind with its schema
 * and example, and "Send test event" delivering a signed event of that kind to a real HTTPS receiver. It also
 * takes the catalog's screenshots at 1280 and 390 px; `UPDATE_SCREENSHOTS=1` writes them to docs/screenshots.
 */

const INTERNAL_TOKEN = 'internal-token-for-event-types-page';
const UPDATE = process.env.UPDATE_SCREENSHOTS === '1';
const OUT = UPDATE
  ? path.join(__dirname, '..', '..', '..', 'docs', 'screenshots')
  : mkdtempSync(path.join(os.tmpdir(), 'pw-event-types-'));

describe('the event catalog page', () => {
  const config = testConfig({ INTERNAL_API_TOKEN: INTERNAL_TOKEN });
  const h = useDashboardHarness(config);
  afterAll(() => {
    if (!UPDATE) rmSync(OUT, { recursive: true, force: true });
  });

  async function signIn(page: Page, accountId: string): Promise<void> {
    const res = await fetch(`${h.origin}/internal/v1/dashboard/sessions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${INTERNAL_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ account_id: accountId }),
    });
    const { url } = (await res.json()) as { url: string };
    await signInWithLink(page, url);
  }

  it('lists every kind with its schema and example, and sends a test event that a real receiver gets signed', async () => {
    const accountId = await createAccount(h.tw.pool, {
      name: 'Duka Letu',
      email: 'ops@duka.example',
      status: 'active',
    });
    const orders = await createEndpoint(h.tw.pool, {
      accountId,
      url: `${h.receiver.url}/catalog-orders`,
      events: ['parcel.delivered', 'cod.settled'],
    });
    await createEndpoint(h.tw.pool, { accountId, url: `${h.receiver.url}/catalog-all` });
    const { page, errors } = await h.browser.newPage({ viewport: { width: 1280, height: 900 } });
    await signIn(page, accountId);

    // Reached from the page's navigation.
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Event types' }).click();
    await page.waitForURL('**/dashboard/test/event-types');
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Event types');
    const titles = await page.getByRole('heading', { level: 2 }).allTextContents();
    expect(titles).toEqual(['API versions', 'Headers on every POST', ...EVENT_TYPES]);
    // The headers every POST carries, from the list the OpenAPI document and docs/events.md use.
    const headers = page.locator('#delivery-headers');
    const listed = await headers.locator('dt code').allTextContents();
    expect(listed).toEqual(deliveryHeaders().map((header) => header.name));
    expect(listed).toEqual(
      expect.arrayContaining([
        'Service-Version',
        'webhook-id',
        'webhook-timestamp',
        'webhook-signature',
        'traceparent',
        'Deprecation',
        'Sunset',
      ]),
    );
    expect(await headers.textContent()).toContain('custom headers');
    // The versions, newest first, and what the newest changed.
    const versions = page.locator('#api-versions');
    await expect.poll(() => versions.locator('dt').allTextContents()).toEqual(['2026-12-01 (newest)', '2026-11-21']);
    expect(await versions.textContent()).toContain('data.parcel { id, parcel_number } names the parcel');

    for (const type of EVENT_TYPES) {
      const section = page.getByRole('region', { name: type });
      // The schema is collapsed until asked for; opened, it is the schema publishing checks.
      const schema = section.locator('details.schema pre');
      expect(await schema.isVisible()).toBe(false);
      await section.getByText('JSON Schema', { exact: true }).click();
      await expect.poll(() => schema.isVisible()).toBe(true);
      expect(JSON.parse((await schema.textContent()) ?? '')).toEqual(JSON.parse(JSON.stringify(EVENT_SCHEMAS[type])));
      const example = JSON.parse((await section.locator('pre.example').textContent()) ?? '');
      expect(Compile(EVENT_SCHEMAS[type]).Check(example)).toBe(true);
      expect(await section.getByRole('button', { name: 'Send test event' }).count()).toBe(1);
    }
    // Only endpoints subscribed to the kind are offered.
    const returned = page.getByRole('region', { name: 'parcel.returned' }).getByLabel('Endpoint');
    expect(await returned.locator('option').allTextContents()).toEqual([`${h.receiver.url}/catalog-all`]);

    const settled = page.getByRole('region', { name: 'cod.settled' });
    await settled.getByLabel('Endpoint').selectOption(orders.id);
    await settled.getByRole('button', { name: 'Send test event' }).click();
    await page.waitForURL('**/dashboard/test/events/evt_*');
    await expect.poll(() => page.getByRole('status').first().textContent()).toContain('Test event sent');

    await waitFor(() => h.receiver.at('/catalog-orders').length === 1, {
      what: 'the test event at the receiver',
      timeoutMs: 30_000,
    });
    const [request] = h.receiver.at('/catalog-orders');
    const event = constructEvent(
      request?.rawBody ?? Buffer.alloc(0),
      request?.headers['service-signature'],
      orders.secret,
    );
    expect(event.type).toBe('cod.settled');
    if (event.type !== 'cod.settled') throw new Error('narrowed above');
    expect(event.data.cod_settlement).toMatchObject({ currency: 'KES', amount: expect.any(Number) });
    // Every header the page lists as always sent arrived.
    for (const header of deliveryHeaders().filter((candidate) => candidate.always)) {
      expect(request?.headers[header.name.toLowerCase()], header.name).toEqual(expect.any(String));
    }
    expect(page.url()).toContain(event.id);
    expect(h.receiver.at('/catalog-all')).toHaveLength(0);
    expect(errors).toEqual([]);
  });

  it('refuses a test event to an endpoint of the account that is not usable, on the page, with the same rules', async () => {
    const accountId = await createAccount(h.tw.pool, { name: 'Soko', email: 'ops@soko.example', status: 'active' });
    await createEndpoint(h.tw.pool, { accountId, url: `${h.receiver.url}/catalog-refused` });
    const { page } = await h.browser.newPage();
    await signIn(page, accountId);
    await page.goto(`${h.origin}/dashboard/test/event-types`);
    const section = page.getByRole('region', { name: 'parcel.created' });
    // The chosen endpoint is disabled in between: the domain refuses, the page says why beside that kind's form.
    await h.tw.pool.query('UPDATE webhook_endpoints SET disabled_at = now() WHERE account_id = $1', [accountId]);
    await section.getByRole('button', { name: 'Send test event' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('disabled');
    expect(h.receiver.at('/catalog-refused')).toHaveLength(0);
    // A post without the session's CSRF token is refused before anything is sent.
    const forged = await page.request.post(`${h.origin}/dashboard/test/event-types/test`, {
      form: { type: 'parcel.created', endpoint_id: 'we_x' },
      headers: { origin: h.origin },
    });
    expect(forged.status()).toBe(403);
  });

  it('reads well at 1280 and 390 px wide (screenshots)', async () => {
    const accountId = await createAccount(h.tw.pool, {
      name: 'Duka Letu',
      email: 'shots@duka.example',
      status: 'active',
    });
    await createEndpoint(h.tw.pool, { accountId, url: 'https://shop.duka.example/webhooks' });
    mkdirSync(OUT, { recursive: true });
    for (const [name, viewport] of [
      // Tall enough on a desktop to show the first kind whole: its example and its Send test event form.
      ['event-types', { width: 1280, height: 1500 }],
      ['event-types-phone', { width: 390, height: 844 }],
    ] as const) {
      const { page, errors } = await h.browser.newPage({ viewport });
      await signIn(page, accountId);
      await page.goto(`${h.origin}/dashboard/test/event-types`);
      const overflow = await page.evaluate(() => {
        const doc = (
          globalThis as unknown as { document: { documentElement: { scrollWidth: number; clientWidth: number } } }
        ).document;
        return doc.documentElement.scrollWidth - doc.documentElement.clientWidth;
      });
      expect(overflow, `${name} is wider than its viewport`).toBeLessThanOrEqual(0);
      const file = path.join(OUT, `${name}.png`);
      await page.screenshot({ path: file, animations: 'disabled', caret: 'hide' });
      expect(statSync(file).size).toBeLessThan(300_000);
      expect(errors).toEqual([]);
    }
  });
});
