import { mkdtempSync, statSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSignInLink } from '../../../src/domain/dashboard-sessions';
import { apiFixture, type ApiFixture } from '../../helpers/api';
import { launchBrowser, signInWithLink, type BrowserHarness } from '../../helpers/browser';
import { createEndpoint } from '../../helpers/delivery';
import { createAccount, createApiKey } from '../../helpers/fixtures';
import { pageSession } from '../../helpers/page-session';

/**
 * Changes made on the developers page are in the audit log as the page session's (its public id, never its
 * cookie), and the page's "Audit log" lists them newest first, in Chromium.
 */
describe('developers page: audit log', () => {
  let f: ApiFixture;
  let origin: string;
  let browser: BrowserHarness;
  const shots = mkdtempSync(path.join(os.tmpdir(), 'pw-audit-'));

  beforeAll(async () => {
    f = await apiFixture({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false' } });
    await f.app.listen({ host: '127.0.0.1', port: 0 });
    origin = `http://127.0.0.1:${(f.app.server.address() as AddressInfo).port}`;
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await f?.close();
  });

  const entriesOf = async (accountId: string) =>
    (
      await f.pool.query<{
        action: string;
        actor_type: string;
        actor_id: string | null;
        target_id: string;
        changes: string[] | null;
      }>(
        'SELECT action, actor_type, actor_id, target_id, changes FROM audit_log WHERE account_id = $1 ORDER BY created_at, id',
        [accountId],
      )
    ).rows;

  it('records every change made through the page with actor dashboard and the session id', async () => {
    const accountId = await createAccount(f.pool, { status: 'active' });
    const session = await pageSession(f.app, f.pool, accountId);
    expect(session.id).toMatch(/^dss_[0-9a-f]{24}$/);
    expect(session.cookie).not.toContain(session.id.slice(4));

    const endpoint = await createEndpoint(f.pool, { accountId, url: 'https://93.184.215.14/made-elsewhere' });
    const key = await createApiKey(f.pool, { accountId, mode: 'test' });
    const base = '/dashboard/test';
    const steps: Array<[string, Record<string, string>]> = [
      [`${base}/endpoints`, { url: 'https://93.184.215.14/new' }],
      [`${base}/endpoints/${endpoint.id}/update`, { url: 'https://93.184.215.14/changed', description: 'orders' }],
      [`${base}/endpoints/${endpoint.id}/disable`, { confirm: 'yes' }],
      [`${base}/endpoints/${endpoint.id}/rotate`, { confirm: 'yes' }],
      [`${base}/endpoints/${endpoint.id}/delete`, { confirm: 'yes' }],
      [`${base}/keys`, { scopes: 'network:read', description: 'checkout' }],
      [`${base}/keys/${key.id}/revoke`, { confirm: 'yes' }],
    ];
    for (const [url, fields] of steps) {
      const res = await session.send('POST', url, fields);
      expect(res.statusCode, `${url}: ${res.body.slice(0, 200)}`).toBeLessThan(400);
    }
    const entries = await entriesOf(accountId);
    expect(entries.map((entry) => entry.action)).toEqual([
      'endpoint.created',
      'endpoint.updated',
      'endpoint.updated',
      'endpoint.secret_rotated',
      'endpoint.deleted',
      'api_key.created',
      'api_key.revoked',
    ]);
    for (const entry of entries) expect(entry).toMatchObject({ actor_type: 'dashboard', actor_id: session.id });
    expect(entries[1]).toMatchObject({ target_id: endpoint.id, changes: ['url', 'description'] });
    expect(entries[2]).toMatchObject({ target_id: endpoint.id, changes: ['disabled'] });
    expect(entries[6]).toMatchObject({ target_id: key.id });
    // A confirmation asked for first changes nothing and records nothing.
    await session.send('POST', `${base}/keys/${key.id}/revoke`, {});
    expect(await entriesOf(accountId)).toHaveLength(entries.length);
  });

  it('lists the entries newest first on the Audit log page, with pages of 25', async () => {
    const accountId = await createAccount(f.pool, { status: 'active', name: 'Duka Letu' });
    const { page, errors } = await browser.newPage({ viewport: { width: 1280, height: 860 } });
    await signInWithLink(page, (await createSignInLink(f.pool, { accountId, origin })).url);
    await page.getByLabel('Description').fill('checkout server');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByRole('textbox', { name: 'New key' }).waitFor();

    await page.getByRole('link', { name: 'Audit log' }).click();
    await page.waitForURL('**/dashboard/test/audit-log');
    const rows = page.locator('table tbody tr');
    await expect.poll(() => rows.count()).toBe(1);
    await expect.poll(() => rows.first().innerText()).toMatch(/api_key\.created[\s\S]*Developers page[\s\S]*dss_/);
    await page.screenshot({ path: path.join(shots, 'audit-log.png'), animations: 'disabled', caret: 'hide' });
    expect(statSync(path.join(shots, 'audit-log.png')).size).toBeGreaterThan(10_000);

    // 26 more entries: the first page shows 25, "Older" the rest.
    for (let i = 0; i < 13; i++) {
      const { id } = await createEndpoint(f.pool, { accountId, url: `https://93.184.215.14/n${i}` });
      await f.pool.query(
        `INSERT INTO audit_log (id, account_id, livemode, action, actor_type, actor_id, target_type, target_id)
         VALUES ('aud_c' || $3, $1, false, 'endpoint.created', 'cli', NULL, 'webhook_endpoint', $2),
                ('aud_d' || $3, $1, false, 'endpoint.deleted', 'cli', NULL, 'webhook_endpoint', $2)`,
        [accountId, id, String(i)],
      );
    }
    await page.goto(`${origin}/dashboard/test/audit-log`);
    await expect.poll(() => rows.count()).toBe(25);
    await page.getByRole('link', { name: 'Older' }).click();
    await expect.poll(() => rows.count()).toBe(2);
    await expect.poll(() => rows.last().innerText()).toMatch(/api_key\.created/);
    await page.goto(`${origin}/dashboard/test/audit-log?action=api_key.created`);
    await expect.poll(() => rows.count()).toBe(1);
    expect(errors).toEqual([]);
  });
});
