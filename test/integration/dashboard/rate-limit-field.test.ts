import { describe, expect, it } from 'vitest';
import { signInWithLink } from '../../helpers/browser';
import { useDashboardHarness } from '../../helpers/harness';
import { testConfig } from '../../helpers/env';
import { createAccount } from '../../helpers/fixtures';

const INTERNAL_TOKEN = 'internal-token-for-rate-limit-field';

/** The developers page's "Rate limit (per second)" field, in Chromium against the real app. */
describe('developers page: rate limit field', () => {
  const h = useDashboardHarness(testConfig({ INTERNAL_API_TOKEN: INTERNAL_TOKEN }));

  async function signedIn() {
    const accountId = await createAccount(h.tw.pool, {
      status: 'active',
      name: 'Duka Letu',
      email: 'ops@duka.example',
    });
    const response = await fetch(`${h.origin}/internal/v1/dashboard/sessions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${INTERNAL_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ account_id: accountId }),
    });
    expect(response.status).toBe(201);
    const tab = await h.browser.newPage();
    await signInWithLink(tab.page, ((await response.json()) as { url: string }).url);
    return { ...tab, accountId };
  }

  const stored = async (accountId: string) =>
    (await h.tw.pool.query('SELECT rate_limit FROM webhook_endpoints WHERE account_id = $1', [accountId])).rows.map(
      (r) => r.rate_limit,
    );

  it('sets the limit at registration, shows it, changes it, refuses a bad value and removes it', async () => {
    const { page, accountId, errors } = await signedIn();
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByLabel('Endpoint URL').fill(`${h.receiver.url}/field-${accountId}`);
    await page.getByLabel('Rate limit (per second)').fill('25');
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await page.getByRole('textbox', { name: 'Signing secret' }).waitFor();
    expect(await stored(accountId)).toEqual([25]);
    expect(await page.locator('dl.facts').textContent()).toMatch(/Rate limit \(per second\)\s*25/);

    const field = page.locator('#change-rate-limit');
    expect(await field.inputValue()).toBe('25');
    await field.fill('1001');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await expect.poll(() => page.getByRole('alert').filter({ hasText: '1000' }).count()).toBe(1);
    expect(await page.locator('#change-rate-limit').getAttribute('aria-invalid')).toBe('true');
    expect(await stored(accountId)).toEqual([25]);

    await page.locator('#change-rate-limit').fill('3');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'Endpoint saved.' }).count()).toBe(1);
    expect(await stored(accountId)).toEqual([3]);

    await page.locator('#change-rate-limit').fill('');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await expect.poll(async () => (await stored(accountId))[0]).toBeNull();
    expect(await page.locator('dl.facts').textContent()).toMatch(/Rate limit \(per second\)\s*None/);
    // The refused value's page came back as a 400, which the browser reports; nothing else went wrong.
    expect(errors).toEqual([expect.stringContaining('status of 400')]);
  });
});
