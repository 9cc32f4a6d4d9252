import { mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CLI_ACTOR } from '../../../src/domain/audit-log';
import { registerEndpoint } from '../../../src/domain/endpoints';
import { publishEvent } from '../../../src/domain/events';
import { parcel } from '../../helpers/delivery';
import { waitFor } from '../../helpers/wait';
import { signInWithLink } from '../../helpers/browser';
import { testConfig } from '../../helpers/env';
import { createAccount } from '../../helpers/fixtures';
import { useDashboardHarness } from '../../helpers/harness';

const INTERNAL_TOKEN = 'internal-token-for-lifecycle-pages';
/** Kept when LIFECYCLE_SHOTS names a folder (to look at them); else a temporary one, removed after. */
const OUT = process.env.LIFECYCLE_SHOTS ?? mkdtempSync(path.join(os.tmpdir(), 'pw-lifecycle-'));

/** The endpoint's page pauses and resumes it, says since when it is paused, and why the engine disabled it. */
describe('developers page: pause, resume, disabled because gone', () => {
  const config = testConfig({ INTERNAL_API_TOKEN: INTERNAL_TOKEN });
  const h = useDashboardHarness(config);
  afterAll(() => {
    if (!process.env.LIFECYCLE_SHOTS) rmSync(OUT, { recursive: true, force: true });
  });

  async function signedInPage(accountId: string) {
    const { page, errors } = await h.browser.newPage({ viewport: { width: 1280, height: 900 } });
    const link = await fetch(`${h.origin}/internal/v1/dashboard/sessions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${INTERNAL_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ account_id: accountId }),
    });
    await signInWithLink(page, ((await link.json()) as { url: string }).url);
    return { page, errors };
  }

  it('pauses with the Pause button, shows paused since when, and resumes with Resume', async () => {
    const accountId = await createAccount(h.tw.pool, { status: 'active' });
    const endpoint = await registerEndpoint(
      { pool: h.tw.pool, config },
      { accountId, livemode: false },
      {
        url: `${h.receiver.url}/page-paused`,
      },
      CLI_ACTOR,
    );
    const { page, errors } = await signedInPage(accountId);
    await page.goto(`${h.origin}/dashboard/test/endpoints/${endpoint.id}`);
    await page.getByRole('button', { name: 'Pause', exact: true }).click();
    await page.waitForURL(`**/endpoints/${endpoint.id}?notice=endpoint_paused`);
    const note = page.getByRole('note').filter({ hasText: 'This endpoint is paused' });
    await expect(note.textContent()).resolves.toMatch(/since .*New events and retries are held/s);
    const { rows } = await h.tw.pool.query('SELECT paused_at FROM webhook_endpoints WHERE id = $1', [endpoint.id]);
    expect(rows[0].paused_at).not.toBeNull();
    const status = page.locator('dl.facts div', { hasText: 'Status' }).locator('dd');
    await expect(status.textContent()).resolves.toMatch(/Paused\s+since/);
    await page.screenshot({ path: path.join(OUT, 'endpoint-paused.png'), fullPage: false, animations: 'disabled' });
    expect(statSync(path.join(OUT, 'endpoint-paused.png')).size).toBeGreaterThan(10_000);

    // An event sent meanwhile is held: its page says so, and nothing reaches the receiver.
    const { event } = await publishEvent(
      { pool: h.tw.pool },
      { accountId, livemode: false, type: 'parcel.created', data: { parcel: parcel() } },
    );
    await waitFor(
      async () => {
        const held = await h.tw.pool.query(`SELECT 1 FROM events WHERE id = $1 AND dispatched_at IS NOT NULL`, [
          event.id,
        ]);
        return held.rowCount === 1;
      },
      { what: 'the held event handed off', timeoutMs: 30_000 },
    );
    await page.goto(`${h.origin}/dashboard/test/events/${event.id}`);
    const row = page.locator('tr', { hasText: '/page-paused' });
    await expect(row.textContent()).resolves.toMatch(/Held\s*while the endpoint is paused/);
    await page.screenshot({ path: path.join(OUT, 'event-held.png'), fullPage: false, animations: 'disabled' });
    expect(h.receiver.at('/page-paused')).toEqual([]);

    await page.goto(`${h.origin}/dashboard/test/endpoints/${endpoint.id}`);
    await page.getByRole('button', { name: 'Resume', exact: true }).click();
    await page.waitForURL(`**/endpoints/${endpoint.id}?notice=endpoint_resumed`);
    await expect(status.textContent()).resolves.toContain('Enabled');
    expect(await page.getByRole('note').filter({ hasText: 'This endpoint is paused' }).count()).toBe(0);
    const after = await h.tw.pool.query('SELECT paused_at FROM webhook_endpoints WHERE id = $1', [endpoint.id]);
    expect(after.rows[0].paused_at).toBeNull();
    // The held delivery goes out once resumed.
    await waitFor(() => h.receiver.at('/page-paused').length === 1, {
      what: 'the held event posted',
      timeoutMs: 30_000,
    });
    expect(errors).toEqual([]);
  });

  it('says an endpoint was disabled because it answered 410 Gone', async () => {
    const accountId = await createAccount(h.tw.pool, { status: 'active' });
    const endpoint = await registerEndpoint(
      { pool: h.tw.pool, config },
      { accountId, livemode: false },
      {
        url: `${h.receiver.url}/page-gone`,
      },
      CLI_ACTOR,
    );
    await h.tw.pool.query(`UPDATE webhook_endpoints SET disabled_at = now(), disabled_reason = 'gone' WHERE id = $1`, [
      endpoint.id,
    ]);
    const { page, errors } = await signedInPage(accountId);
    await page.goto(`${h.origin}/dashboard/test/endpoints/${endpoint.id}`);
    const note = page.getByRole('note').filter({ hasText: 'answered 410 Gone' });
    expect(await note.count()).toBe(1);
    // Neither Pause nor Resume on a disabled endpoint: Enable is what it needs.
    expect(await page.getByRole('button', { name: 'Pause', exact: true }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Enable', exact: true }).count()).toBe(1);
    await page.screenshot({ path: path.join(OUT, 'endpoint-gone.png'), fullPage: false, animations: 'disabled' });
    expect(errors).toEqual([]);
  });
});
