import { html, type Child, type Html } from './html';
import type { AssetUrls, Mode, PageContext, Section } from './models';
import { paths } from './paths';

/** The document shell every page shares: one stylesheet, one deferred script, nothing inline (CSP). */
export function documentShell(input: {
  title: string;
  assets: AssetUrls;
  body: Child;
  bodyClass?: string;
  head?: Html;
  /** The GET address of a page that answers a form post; app.js puts it in the address bar. */
  canonical?: string;
}): Html {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<title>${input.title} · Parcel developers</title>
<link rel="icon" href="${input.assets.icon}" type="image/svg+xml">
<link rel="stylesheet" href="${input.assets.css}">
<script src="${input.assets.js}" defer></script>
${input.head}
</head>
<body class="${input.bodyClass ?? ''}"${input.canonical ? html` data-canonical="${input.canonical}"` : ''}>
${input.body}
</body>
</html>`;
}

export function csrfField(token: string): Html {
  return html`<input type="hidden" name="_csrf" value="${token}">`;
}

const SECTIONS: { section: Section; label: string }[] = [
  { section: 'overview', label: 'Overview' },
  { section: 'keys', label: 'API keys' },
  { section: 'endpoints', label: 'Webhooks' },
  { section: 'events', label: 'Events' },
  { section: 'event-types', label: 'Event types' },
  { section: 'audit-log', label: 'Audit log' },
];

const MODE_LABEL: Record<Mode, string> = { test: 'Test mode', live: 'Live mode' };

/** Two links, the current one marked: works without script and reads as a switch to a screen reader. */
function modeSwitch(ctx: PageContext, section: Section): Html {
  const link = (mode: Mode) =>
    mode === ctx.mode
      ? html`<a href="${paths.section(mode, section)}" aria-current="page" class="mode-${mode}">${MODE_LABEL[mode]}</a>`
      : html`<a href="${paths.section(mode, section)}" class="mode-${mode}">${MODE_LABEL[mode]}</a>`;
  return html`<nav class="mode-switch" aria-label="Mode">${link('test')}${link('live')}</nav>`;
}

function accountBanner(ctx: PageContext): Html | undefined {
  if (ctx.account.status === 'suspended') {
    return html`<div class="banner banner-danger" role="note">
<strong>This account is suspended.</strong>
Nothing is delivered to your endpoints and nothing can be changed here; you can still read your keys, endpoints and
events. Contact Parcel support to have it restored.
</div>`;
  }
  if (ctx.account.status === 'pending') {
    return html`<div class="banner banner-warn" role="note">
<strong>Your account is waiting for approval.</strong>
Test keys work now. Live keys wait for approval: when you have finished testing, ask Parcel support to approve
your account.
</div>`;
  }
  return undefined;
}

export function readOnly(ctx: PageContext): boolean {
  return ctx.account.status === 'suspended';
}

export function layout(
  ctx: PageContext,
  input: { title: string; section: Section; body: Child; heading?: Child },
): Html {
  const offered = SECTIONS.filter(({ section }) => !ctx.sections || ctx.sections.includes(section));
  const nav = offered.map(({ section, label }) =>
    section === input.section
      ? html`<li><a href="${paths.section(ctx.mode, section)}" aria-current="page">${label}</a></li>`
      : html`<li><a href="${paths.section(ctx.mode, section)}">${label}</a></li>`,
  );
  return documentShell({
    title: `${input.title} (${ctx.mode})`,
    assets: ctx.assets,
    bodyClass: `mode-${ctx.mode}`,
    canonical: ctx.canonical,
    body: html`<a class="skip" href="#main">Skip to content</a>
<header class="top">
  <div class="brand"><span class="logo" aria-hidden="true"></span>Parcel <span class="muted">developers</span></div>
  <div class="account" title="${ctx.account.id}">${ctx.account.name}</div>
  ${modeSwitch(ctx, input.section)}
  <form method="post" action="${paths.signOut}" class="sign-out">${csrfField(ctx.csrfToken)}<button type="submit" class="link">Sign out</button></form>
  <form method="post" action="${paths.signOutEverywhere}" class="sign-out">${csrfField(ctx.csrfToken)}<button type="submit" class="link">Sign out everywhere</button></form>
</header>
<nav class="sections" aria-label="Sections"><ul>${nav}</ul></nav>
${ctx.mode === 'test' ? html`<div class="test-stripe">Test mode: nothing here touches live parcels or money.</div>` : ''}
<main id="main" tabindex="-1">
${accountBanner(ctx)}
${ctx.notice ? html`<p class="notice" role="status">${ctx.notice}</p>` : ''}
<h1>${input.heading ?? input.title}</h1>
${input.body}
</main>
<dialog id="confirm-dialog" aria-labelledby="confirm-title" aria-describedby="confirm-text">
  <form method="dialog">
    <h2 id="confirm-title">Are you sure?</h2>
    <p id="confirm-text"></p>
    <div class="actions"><button value="cancel" class="secondary">Cancel</button><button value="ok" class="danger" id="confirm-ok">Confirm</button></div>
  </form>
</dialog>`,
  });
}
