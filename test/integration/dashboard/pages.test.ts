import { execFile } from 'node:child_process';
import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { useDashboardHarness } from '../../helpers/harness';
import { signInWithLink, type BrowserHarness, type TestPage } from '../../helpers/browser';
import { testConfig } from '../../helpers/env';
import { createAccount, createApiKey } from '../../helpers/fixtures';
import type { Receiver } from '../../helpers/receiver';
import type { TestWorker } from '../../helpers/temporal';
import { waitFor } from '../../helpers/wait';
import { parcel, publishOverHttp } from '../../helpers/delivery';
import { testDatabaseUrl } from '../../helpers/database';

/**
 * The developers page in Debian's Chromium against the real app on loopback, this run's Postgres and Temporal
 * dev server, a real worker and an HTTPS receiver: what a merchant does there, end to end.
 */

const INTERNAL_TOKEN = 'internal-token-for-dashboard-tests';
const BIN = path.join(__dirname, '..', '..', '..', 'src', 'cli', 'bin.js');

describe('developers page', () => {
  const config = testConfig({
    INTERNAL_API_TOKEN: INTERNAL_TOKEN,
    DELIVERY_RETRY_DELAYS: '1s,1s',
    DELIVERY_TIMEOUT: '2s',
  });
  const h = useDashboardHarness(config);
  let tw: TestWorker;
  let origin: string;
  let browser: BrowserHarness;
  let receiver: Receiver;
  beforeAll(() => {
    ({ tw, origin, browser, receiver } = h);
  });

  async function signInLink(accountId: string): Promise<{ url: string; expires_at: number }> {
    const response = await fetch(`${origin}/internal/v1/dashboard/sessions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${INTERNAL_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ account_id: accountId }),
    });
    expect(response.status).toBe(201);
    return (await response.json()) as { url: string; expires_at: number };
  }

  /** A fresh browser context signed in to a fresh account. */
  async function signedIn(
    options: { status?: 'pending' | 'active' | 'suspended'; name?: string } = {},
  ): Promise<TestPage & { accountId: string }> {
    const accountId = await createAccount(tw.pool, {
      status: options.status ?? 'active',
      name: options.name ?? 'Duka Letu',
      email: 'ops@duka.example',
    });
    const tab = await browser.newPage();
    await signInWithLink(tab.page, (await signInLink(accountId)).url);
    return { ...tab, accountId };
  }

  const api = (key: string, url = '/v1/towns?limit=1') =>
    fetch(`${origin}${url}`, { headers: { authorization: `Bearer ${key}` } });

  it('shows no account data without a session', async () => {
    await createAccount(tw.pool, { name: 'Secret Shop' });
    const { page, errors } = await browser.newPage();
    for (const url of [
      '/dashboard',
      '/dashboard/test/keys',
      '/dashboard/live/endpoints',
      '/dashboard/test/endpoints/we_x/deliveries',
    ]) {
      const response = await page.goto(`${origin}${url}`);
      expect(response?.status(), url).toBe(401);
      await expect
        .poll(() => page.getByRole('heading', { level: 1 }).textContent())
        .toBe('Sign in to the developers page');
      const body = (await page.content()).toString();
      expect(body, url).not.toMatch(/acct_[A-Za-z0-9]|Secret Shop|svc_(test|live)_[A-Za-z0-9]|we_[A-Za-z0-9]{5}/);
      expect(response?.headers()['content-security-policy']).toContain("frame-ancestors 'none'");
      expect(response?.headers()['x-frame-options']).toBe('DENY');
      expect(response?.headers()['cache-control']).toBe('no-store');
    }
    // The 401 of each page is expected; nothing else (a CSP violation, a script error) is.
    expect(errors.filter((error) => !error.includes('status of 401'))).toEqual([]);
  });

  it('signs in with a single-use link (internal route and CLI) and refuses it the second time', async () => {
    const accountId = await createAccount(tw.pool, { name: 'Duka Letu' });
    const link = await signInLink(accountId);
    expect(link.url).toMatch(new RegExp(`^${origin}/dashboard/sign-in/[A-Za-z0-9]{43}$`));
    expect(link.expires_at - Date.now() / 1000).toBeGreaterThan(590);
    expect(link.expires_at - Date.now() / 1000).toBeLessThanOrEqual(600);

    // A mail scanner or a link preview fetches the link first (HEAD, GET): that signs nobody in and uses nothing.
    expect((await fetch(link.url, { method: 'HEAD' })).status).toBe(200);
    const scanned = await fetch(link.url);
    expect(scanned.headers.get('set-cookie')).toBeNull();
    expect(await scanned.text()).not.toContain('Duka Letu');

    const first = await browser.newPage();
    await signInWithLink(first.page, link.url);
    await expect.poll(() => first.page.locator('.account').textContent()).toBe('Duka Letu');
    const [cookie] = await first.context.cookies();
    expect(cookie).toMatchObject({
      name: 'parcel_dashboard_session',
      httpOnly: true,
      sameSite: 'Strict',
      secure: false,
      path: '/dashboard',
    });
    expect(cookie!.expires - Date.now() / 1000).toBeGreaterThan(12 * 3600 - 60);

    const second = await browser.newPage();
    const again = await second.page.goto(link.url);
    expect(again?.status()).toBe(401);
    await expect
      .poll(() => second.page.getByRole('heading', { level: 1 }).textContent())
      .toBe('This sign-in link cannot be used');
    expect(await second.context.cookies()).toEqual([]);

    // The operator's way: the CLI prints the same kind of link, on PUBLIC_URL.
    const printed = await new Promise<{ url: string; expires_at: number }>((resolve, reject) => {
      execFile(
        process.execPath,
        [BIN, 'dashboard', '--account', accountId, '--json'],
        {
          env: { ...process.env, DATABASE_URL: testDatabaseUrl(), PUBLIC_URL: origin, LOG_LEVEL: 'silent' },
          timeout: 60_000,
        },
        (error, stdout) => (error ? reject(new Error(error.message, { cause: error })) : resolve(JSON.parse(stdout))),
      );
    });
    expect(printed.url.startsWith(`${origin}/dashboard/sign-in/`)).toBe(true);
    const third = await browser.newPage();
    await signInWithLink(third.page, printed.url);

    // Signing out ends the session on the server: the old cookie opens nothing any more.
    const [kept] = await third.context.cookies();
    await third.page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await third.page.waitForURL('**/dashboard/sign-in?signed_out=1');
    const replayed = await fetch(`${origin}/dashboard/test/keys`, {
      headers: { cookie: `${kept!.name}=${kept!.value}` },
    });
    expect(replayed.status).toBe(401);

    // Sign out everywhere, from one browser, ends the account's session in the other one too.
    const here = await browser.newPage();
    await signInWithLink(here.page, (await signInLink(accountId)).url);
    await here.page.getByRole('button', { name: 'Sign out everywhere', exact: true }).click();
    await here.page.waitForURL('**/dashboard/sign-in?signed_out=everywhere');
    await expect
      .poll(() => here.page.getByRole('heading', { level: 1 }).textContent())
      .toBe('You are signed out everywhere');
    expect((await first.page.reload())?.status()).toBe(401);
    expect([...first.errors, ...here.errors].filter((error) => !error.includes('status of 401'))).toEqual([]);
  }, 120_000);

  it('follows the rotation order: create, deploy, watch Last used move, revoke the old key', async () => {
    const { page, errors } = await signedIn();
    const createKey = async (description: string): Promise<string> => {
      await page.getByLabel('Description').fill(description);
      await page.getByRole('button', { name: 'Create key' }).click();
      const shown = page.getByRole('textbox', { name: 'New key' });
      await shown.waitFor();
      return shown.inputValue();
    };
    const row = (last4: string) => page.getByRole('row').filter({ hasText: `…${last4}` });
    const lastUsed = async (last4: string) => (await row(last4).locator('td.last-used').textContent())?.trim();

    const oldKey = await createKey('Checkout server');
    expect(oldKey).toMatch(/^svc_test_[A-Za-z0-9]{32}$/);
    expect((await api(oldKey)).status).toBe(200);

    // 1. Create the replacement. It is shown once: a reload shows it no more.
    const newKey = await createKey('Checkout server (new)');
    await page.reload();
    expect(await page.getByRole('textbox', { name: 'New key' }).count()).toBe(0);
    expect(await page.content()).not.toContain(newKey);
    await expect.poll(() => lastUsed(newKey.slice(-4))).toBe('Never');
    await expect.poll(() => lastUsed(oldKey.slice(-4))).toBe('just now');

    // 2. Deploy it: the merchant's system uses the new key. 3. Its last-used indicator moves.
    expect((await api(newKey)).status).toBe(200);
    await expect
      .poll(async () => (await page.reload(), lastUsed(newKey.slice(-4))), { timeout: 10_000 })
      .toBe('just now');

    // 4. Revoke the old key, confirming in the dialog; revocation is immediate.
    await row(oldKey.slice(-4))
      .getByRole('button', { name: `Revoke key ending ${oldKey.slice(-4)}` })
      .click();
    const dialog = page.getByRole('dialog');
    await dialog.getByRole('button', { name: 'Revoke' }).click();
    await page.waitForURL('**/dashboard/test/keys?notice=key_revoked');
    await expect.poll(() => row(oldKey.slice(-4)).getByText('Revoked').count()).toBe(1);
    const refused = await api(oldKey);
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('revoked_api_key');
    expect((await api(newKey)).status).toBe(200);
    expect(errors).toEqual([]);
  });

  it('registers an endpoint, shows its secret once, and a delivery appears in its Deliveries', async () => {
    const { page, accountId, errors } = await signedIn();
    await page.getByRole('link', { name: 'Webhooks' }).click();
    const url = `${receiver.url}/dashboard-${accountId}`;
    await page.getByLabel('Endpoint URL').fill(url);
    await page.getByLabel('Description').fill('Order updates');
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    const secret = await page.getByRole('textbox', { name: 'Signing secret' }).inputValue();
    expect(secret).toMatch(/^whsec_/);

    const published = await publishOverHttp(origin, INTERNAL_TOKEN, {
      account_id: accountId,
      livemode: false,
      type: 'parcel.delivered',
      data: { parcel: parcel() },
    });
    expect(published.status).toBe(201);
    const event = (await published.json()) as { id: string };

    // The receiver got it, signed with the secret the page showed.
    const received = await waitFor(() => receiver.at(`/dashboard-${accountId}`)[0], { what: 'the delivery' });
    const [t, v1] = String(received.headers['service-signature'])
      .split(',')
      .map((part) => part.split('=')[1]);
    expect(createHmac('sha256', secret).update(`${t}.${received.rawBody.toString()}`).digest('hex')).toBe(v1);

    await page.getByRole('link', { name: 'Deliveries' }).click();
    await expect
      .poll(async () => (await page.reload(), page.getByRole('row').filter({ hasText: 'Succeeded' }).count()), {
        timeout: 20_000,
      })
      .toBe(1);
    const attempt = page.getByRole('row').filter({ hasText: 'Succeeded' });
    await expect.poll(() => attempt.textContent()).toContain('parcel.delivered');
    expect(await attempt.textContent()).toContain(event.id);
    expect(await attempt.textContent()).toContain('200');
    expect(await attempt.textContent()).toContain('Automatic');

    // Filtering by outcome: no failed attempt.
    await page.getByLabel('Outcome').selectOption('failed');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL('**/deliveries?outcome=failed');
    await expect.poll(() => page.getByText('No failed attempts.').count()).toBe(1);
    expect(errors).toEqual([]);
  });

  it('sends a test event, resends it from its page, changes, disables and enables the endpoint, recovers a window', async () => {
    const { page, accountId, errors } = await signedIn();
    const path = `/resend-${accountId}`;
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByLabel('Endpoint URL').fill(`${receiver.url}${path}`);
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await page.getByRole('textbox', { name: 'Signing secret' }).waitFor();

    // A test event of the chosen kind, delivered to this endpoint only; its page shows the attempt.
    await page.getByLabel('Event kind').selectOption('cod.settled');
    await page.getByRole('button', { name: 'Send test event' }).click();
    await page.waitForURL(/\/dashboard\/test\/events\/evt_/);
    const attempts = () => page.getByRole('row').filter({ hasText: 'Succeeded' }).filter({ hasText: '200' });
    await expect
      .poll(async () => (await page.reload(), attempts().count()), { timeout: 20_000 })
      .toBeGreaterThanOrEqual(1);
    expect(await attempts().first().textContent()).toContain('Test');

    // Resend: the same event again, trigger Resend, same bytes.
    await page.getByRole('button', { name: 'Resend' }).click();
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'Resent to' }).count()).toBe(1);
    await waitFor(() => receiver.at(path).length === 2, { what: 'the resent delivery' });
    const [first, second] = receiver.at(path);
    expect(second!.rawBody.equals(first!.rawBody)).toBe(true);
    await expect
      .poll(
        async () => (
          await page.reload(),
          page.getByRole('row').filter({ hasText: 'Resend' }).filter({ hasText: 'Succeeded' }).count()
        ),
        { timeout: 20_000 },
      )
      .toBeGreaterThanOrEqual(1);

    // The events list has it.
    await page.getByRole('link', { name: 'Events', exact: true }).click();
    await expect.poll(() => page.getByRole('link', { name: 'cod.settled' }).count()).toBe(1);

    // Change the description, then disable (confirmed) and enable again.
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('link', { name: `${receiver.url}${path}`, exact: true }).click();
    await page.locator('#change-description').fill('Checkout receiver');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'Endpoint saved.' }).count()).toBe(1);
    await page.getByRole('button', { name: 'Disable' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Disable' }).click();
    await expect.poll(() => page.getByText('Disabled', { exact: true }).count()).toBeGreaterThan(0);
    await page.getByRole('button', { name: 'Enable' }).click();
    await expect.poll(() => page.getByText('Enabled', { exact: true }).count()).toBeGreaterThan(0);

    // Recover the last hour: everything meant for it was delivered, so nothing is sent again.
    await page.getByLabel('From (UTC)').fill(new Date(Date.now() - 3_600_000).toISOString().slice(0, 16));
    await page.getByRole('button', { name: 'Recover' }).click();
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'Nothing to recover' }).count()).toBe(1);
    expect(receiver.at(path)).toHaveLength(2);
    expect(errors).toEqual([]);
  });

  it('registers an endpoint that delivers in order per parcel, shows an event waiting for the one before, and turns it off', async () => {
    const { page, accountId, errors } = await signedIn();
    const path = `/ordered-${accountId}`;
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByLabel('Endpoint URL').fill(`${receiver.url}${path}`);
    await page.getByLabel('Deliver in order per parcel').check();
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await page.getByRole('textbox', { name: 'Signing secret' }).waitFor();
    expect(await page.getByText('In order per parcel', { exact: true }).count()).toBe(1);

    // The parcel's first event fails every attempt (about 8 s of ladder): the second waits for it meanwhile.
    receiver.script(path, (index) => ({ status: index < 3 ? 500 : 200 }));
    const publish = async () => {
      const response = await publishOverHttp(origin, INTERNAL_TOKEN, {
        account_id: accountId,
        livemode: false,
        type: 'parcel.in_transit',
        data: { parcel: parcel({ id: `p_${accountId}` }) },
      });
      return (await response.json()) as { id: string; sequence: number };
    };
    const first = await publish();
    const second = await publish();
    expect([first.sequence, second.sequence]).toEqual([1, 2]);
    await page.goto(`${origin}/dashboard/test/events/${second.id}`);
    await expect
      .poll(async () => (await page.reload(), page.getByText(`waiting for ${first.id}`).count()), { timeout: 10_000 })
      .toBe(1);
    await waitFor(() => receiver.at(path).length === 4, {
      what: 'the second event posted after the first was abandoned',
      timeoutMs: 30_000,
    });
    expect(JSON.parse(receiver.at(path)[3]!.rawBody.toString()).id).toBe(second.id);

    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('link', { name: `${receiver.url}${path}`, exact: true }).click();
    await page.locator('#change-ordering').uncheck();
    await page.getByRole('button', { name: 'Save changes' }).click();
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'Endpoint saved.' }).count()).toBe(1);
    expect(await page.getByText('As they come', { exact: true }).count()).toBe(1);
    expect(errors).toEqual([]);
  });

  it('refuses a cross-site POST (403 csrf_failed) and a same-site one without the token', async () => {
    const { page, accountId } = await signedIn();
    const keysBefore = await tw.pool.query('SELECT count(*)::int AS n FROM api_keys WHERE account_id = $1', [
      accountId,
    ]);
    // Another origin (localhost is not 127.0.0.1) serving a form that posts to the page.
    const attacker = http.createServer((_request, response) => {
      response.setHeader('content-type', 'text/html');
      response.end(
        `<form method="post" action="${origin}/dashboard/test/keys"><input name="scopes" value="webhooks:manage"><button>Win a prize</button></form>`,
      );
    });
    await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
    try {
      await page.goto(`http://localhost:${(attacker.address() as AddressInfo).port}/`);
      const [response] = await Promise.all([
        page.waitForResponse(`${origin}/dashboard/test/keys`),
        page.getByRole('button', { name: 'Win a prize' }).click(),
      ]);
      expect(response.status()).toBe(403);
      expect(await response.text()).toContain('csrf_failed');
    } finally {
      attacker.close();
    }
    // Same origin, with the session cookie, but no token.
    const forged = await page.request.post(`${origin}/dashboard/test/keys`, {
      form: { scopes: 'webhooks:manage' },
      headers: { origin },
    });
    expect(forged.status()).toBe(403);
    expect(await forged.text()).toContain('csrf_failed');
    const keysAfter = await tw.pool.query('SELECT count(*)::int AS n FROM api_keys WHERE account_id = $1', [accountId]);
    expect(keysAfter.rows[0].n).toBe(keysBefore.rows[0].n);
  });

  it('tells a pending account why live keys wait, and lets a suspended one change nothing', async () => {
    const pending = await signedIn({ status: 'pending' });
    await pending.page.getByRole('link', { name: 'Live mode' }).click();
    await pending.page.waitForURL('**/dashboard/live/keys');
    await expect.poll(() => pending.page.getByText('Your account is waiting for approval.').count()).toBe(1);
    expect(await pending.page.getByRole('button', { name: 'Create key' }).count()).toBe(0);
    await pending.page.getByRole('link', { name: 'Test mode' }).click();
    await expect.poll(() => pending.page.getByRole('button', { name: 'Create key' }).count()).toBe(1);

    const suspended = await signedIn({ status: 'suspended' });
    const { id: keyId, key } = await createApiKey(tw.pool, { accountId: suspended.accountId });
    await suspended.page.reload();
    await expect.poll(() => suspended.page.getByText('This account is suspended.').count()).toBe(1);
    expect(await suspended.page.getByRole('button', { name: 'Create key' }).count()).toBe(0);
    expect(await suspended.page.getByRole('button', { name: /^Revoke/ }).count()).toBe(0);
    await suspended.page.getByRole('link', { name: 'Webhooks' }).click();
    expect(await suspended.page.getByRole('button', { name: 'Add endpoint' }).count()).toBe(0);
    // Even a well-formed post (own origin, right token) changes nothing.
    const csrf = await suspended.page.locator('input[name="_csrf"]').first().inputValue();
    const refused = await suspended.page.request.post(`${origin}/dashboard/test/keys/${keyId}/revoke`, {
      form: { _csrf: csrf, confirm: 'yes' },
      headers: { origin },
    });
    expect(refused.status()).toBe(403);
    expect(await refused.text()).toContain('client_suspended');
    const { rows } = await tw.pool.query('SELECT revoked_at FROM api_keys WHERE id = $1', [keyId]);
    expect(rows[0].revoked_at).toBeNull();
    expect(key).toMatch(/^svc_test_/);
  });
});
