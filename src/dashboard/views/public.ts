import { html, type Child, type Html } from './html';
import { documentShell } from './layout';
import type { AssetUrls } from './models';
import { paths } from './paths';

/**
 * Pages shown without a session. They carry no account data at all: not a name, not an id, nothing that
 * tells whether the link or account exists.
 */

export type SignInReason = 'no-session' | 'link-invalid' | 'signed-out' | 'signed-out-everywhere' | 'rate-limited';

const REASONS: Record<SignInReason, { title: string; text: string }> = {
  'no-session': {
    title: 'Sign in to the developers page',
    text: 'Open the developers page from your Parcel dashboard: it gives you a sign-in link that works once, for 10 minutes.',
  },
  'link-invalid': {
    title: 'This sign-in link cannot be used',
    text: 'It was already used or it has expired (links work once, for 10 minutes). Open the developers page from your Parcel dashboard again to get a new one.',
  },
  'signed-out': {
    title: 'You are signed out',
    text: 'Your session has ended. Open the developers page from your Parcel dashboard to sign in again.',
  },
  'signed-out-everywhere': {
    title: 'You are signed out everywhere',
    text: 'Every session of this account has ended, in every browser. Open the developers page from your Parcel dashboard to sign in again.',
  },
  'rate-limited': {
    title: 'Too many sign-in attempts',
    text: 'Wait a minute, then open the developers page from your Parcel dashboard again.',
  },
};

function publicFrame(assets: AssetUrls, title: string, body: Child, head?: Html): Html {
  return documentShell({
    title,
    assets,
    bodyClass: 'public',
    head,
    body: html`<main id="main" class="card">
<div class="brand"><span class="logo" aria-hidden="true"></span>Parcel <span class="muted">developers</span></div>
${body}
</main>`,
  });
}

export function signInPage(input: { assets: AssetUrls; reason?: SignInReason }): Html {
  const reason = REASONS[input.reason ?? 'no-session'];
  return publicFrame(
    input.assets,
    reason.title,
    html`<h1>${reason.title}</h1>
<p>${reason.text}</p>
<p class="muted">Operators can also print a link with <code>npx parcel-webhooks dashboard --account acct_...</code>.</p>`,
  );
}

/**
 * What opening a sign-in link shows: a button, nothing more. Opening changes nothing, so a mail scanner or a
 * link preview fetching the link cannot use it up; the button's same-origin post (the token is in its address)
 * signs in.
 */
export function signInLinkPage(input: { assets: AssetUrls; action: string }): Html {
  return publicFrame(
    input.assets,
    'Sign in to the developers page',
    html`<h1>Sign in to the developers page</h1>
<p>This link works once, for 10 minutes. Signing in here ends any session this browser already had.</p>
<form method="post" action="${input.action}"><button type="submit">Sign in</button></form>`,
  );
}

export function errorPage(input: {
  assets: AssetUrls;
  title: string;
  message: string;
  code?: string;
  back?: { href: string; label: string };
}): Html {
  return publicFrame(
    input.assets,
    input.title,
    html`<h1>${input.title}</h1>
<p>${input.message}</p>
${input.code ? html`<p class="muted">Error code: <code class="error-code">${input.code}</code></p>` : ''}
<p><a href="${input.back?.href ?? paths.home}">${input.back?.label ?? 'Back to the developers page'}</a></p>`,
  );
}
