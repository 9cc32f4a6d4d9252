import { describe, expect, it } from 'vitest';
import { loadAssets } from '../../../src/dashboard/assets';
import { html, trusted } from '../../../src/dashboard/views/html';
import { keysPage } from '../../../src/dashboard/views/keys';
import { merchantMessage } from '../../../src/dashboard/views/messages';
import { signInPage } from '../../../src/dashboard/views/public';
import { KEYS, SCOPES, sampleContext, samplePages } from '../../helpers/dashboard-fixtures';

const assets = loadAssets().urls;

describe('dashboard views', () => {
  it('escapes every interpolated value and keeps trusted markup', () => {
    const evil = `<img src=x onerror="alert(1)">'&`;
    expect(html`<p title="${evil}">${evil}</p>${trusted('<br>')}`.toString()).toBe(
      '<p title="&lt;img src=x onerror=&quot;alert(1)&quot;&gt;&#39;&amp;">&lt;img src=x onerror=&quot;alert(1)&quot;&gt;&#39;&amp;</p><br>',
    );
    expect(html`${[1, 'a<', null, undefined, false]}`.toString()).toBe('1a&lt;');
  });

  it.each(['test', 'live'] as const)(
    'renders every page (%s mode) with nothing inline for the CSP to refuse',
    (mode) => {
      for (const status of ['active', 'pending', 'suspended'] as const) {
        for (const [name, render] of Object.entries(samplePages(assets, { mode, status }))) {
          const page = render().toString();
          expect(page, name).toMatch(/^<!doctype html>/);
          // Only our script file; no inline script, no style attribute or element, no event handler attribute.
          expect(page.match(/<script\b[^>]*>/g), name).toEqual([`<script src="${assets.js}" defer>`]);
          expect(page, name).not.toMatch(/\sstyle=|<style|\son[a-z]+=/i);
          expect(page, name).not.toContain('<script>alert');
        }
      }
    },
  );

  it('the sign-in page carries no account data', () => {
    const page = signInPage({ assets, reason: 'link-invalid' }).toString();
    expect(page).toContain('cannot be used');
    expect(page).not.toMatch(/acct_[A-Za-z0-9]|Duka|svc_|we_|evt_/);
  });

  it('keys: last four characters, a Last used column, Revoke only on usable keys, the key shown once', () => {
    const ctx = sampleContext({ assets });
    const page = keysPage(ctx, {
      keys: KEYS,
      scopes: SCOPES,
      created: { key: 'svc_test_4eC39HqLyjWDarjtT1zdp7dcQ7dX', record: KEYS[0]! },
    }).toString();
    expect(page).toContain('svc_test_…3f9A');
    expect(page).toContain('<th scope="col">Last used</th>');
    expect(page.match(/>Revoke</g)).toHaveLength(2);
    expect(page).toContain('aria-label="Revoke key ending 3f9A"');
    expect(page).toContain('value="svc_test_4eC39HqLyjWDarjtT1zdp7dcQ7dX"');
    expect(page.match(/svc_test_4eC39HqLyjWDarjtT1zdp7dcQ7dX/g)).toHaveLength(1);
    expect(page).toContain('>Create key<');
    expect(page).toContain('name="_csrf" value="csrf-token-fixture"');
  });

  it('a pending account is told why live keys wait; a suspended one can change nothing', () => {
    const pendingLive = keysPage(sampleContext({ assets, status: 'pending', mode: 'live' }), {
      keys: [],
      scopes: SCOPES,
    }).toString();
    expect(pendingLive).toContain('waiting for approval');
    expect(pendingLive).toContain('ask Parcel');
    expect(pendingLive).not.toContain('Create key');
    const pendingTest = keysPage(sampleContext({ assets, status: 'pending', mode: 'test' }), {
      keys: [],
      scopes: SCOPES,
    }).toString();
    expect(pendingTest).toContain('Create key');
    for (const [name, render] of Object.entries(samplePages(assets, { status: 'suspended' }))) {
      const page = render().toString();
      if (name === 'sign-in' || name === 'sign-in-link' || name === 'error' || name === 'confirm') continue;
      expect(page, name).toContain('This account is suspended');
      // The only forms that still post are Sign out and Sign out everywhere.
      expect(page.match(/method="post"/g), name).toHaveLength(2);
      expect(page, name).toContain('>Sign out<');
      expect(page, name).toContain('>Sign out everywhere<');
    }
  });

  it("API errors in a merchant's words, keeping the API message where it is already plain", () => {
    expect(merchantMessage({ code: 'url_not_https', message: 'url must use https', param: 'url' })).toEqual({
      message: 'The URL must start with https://.',
      param: 'url',
    });
    expect(
      merchantMessage({
        code: 'parameter_invalid',
        message: 'The description must be at most 500 characters.',
        param: 'description',
      }),
    ).toEqual({ message: 'The description must be at most 500 characters.', param: 'description' });
    expect(merchantMessage({ code: 'unknown_event_type', message: 'x', param: 'events[2]' }).param).toBe('events');
  });

  it('serves assets under names that change with their bytes', () => {
    const table = loadAssets();
    expect(table.urls.css).toMatch(/^\/dashboard\/assets\/app-[0-9a-f]{10}\.css$/);
    expect(table.byName.get(table.urls.js.split('/').pop()!)?.contentType).toContain('javascript');
  });
});
