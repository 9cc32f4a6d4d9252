import { badge, checkboxGroup, confirmForm, errorSummary, field, shownOnce, table } from './components';
import { time } from './format';
import { html, type Html } from './html';
import { csrfField, layout, readOnly } from './layout';
import type { FormError, KeyView, Mode, PageContext, ScopeOption } from './models';
import { paths } from './paths';

export interface KeyFormValues {
  scopes: string[];
  description: string;
  expires: string;
}

export interface KeysPageInput {
  /** This mode's keys, newest first. */
  keys: KeyView[];
  scopes: ScopeOption[];
  /** Just created: the only time the key is shown. */
  created?: { key: string; record: KeyView };
  error?: FormError;
  /** What the merchant typed, when the form comes back with an error. */
  form?: KeyFormValues;
}

export function keyLabel(key: Pick<KeyView, 'mode' | 'last4'>): string {
  return `svc_${key.mode}_…${key.last4}`;
}

function keyStatus(key: KeyView, now: Date): Html {
  if (key.revoked_at !== null) return badge('Revoked', 'muted');
  if (key.expires_at !== null && new Date(key.expires_at) <= now) return badge('Expired', 'muted');
  return badge('Active', 'ok');
}

function keyRow(ctx: PageContext, key: KeyView, now: Date): Html {
  const usable = key.revoked_at === null && (key.expires_at === null || new Date(key.expires_at) > now);
  const label = keyLabel(key);
  return html`<tr data-key-id="${key.id}">
<td><code class="key">${label}</code></td>
<td>${key.description ?? html`<span class="muted">None</span>`}</td>
<td class="scopes">${key.scopes.map((scope) => html`<code>${scope}</code> `)}</td>
<td>${time(key.created_at, { now })}</td>
<td class="last-used">${time(key.last_used_at, { now })}</td>
<td>${key.expires_at === null ? html`<span class="muted">Never</span>` : time(key.expires_at, { now })}</td>
<td>${keyStatus(key, now)}</td>
<td>${
    usable && !readOnly(ctx)
      ? confirmForm({
          action: paths.revokeKey(ctx.mode, key.id),
          csrfToken: ctx.csrfToken,
          label: 'Revoke',
          accessibleLabel: `Revoke key ending ${key.last4}`,
          question: `Revoke the key ending ${key.last4}?`,
          consequence: 'Every request made with it fails at once with revoked_api_key. This cannot be undone.',
          danger: true,
        })
      : ''
  }</td>
</tr>`;
}

function createForm(ctx: PageContext, input: KeysPageInput): Html {
  if (readOnly(ctx)) return html``;
  if (ctx.mode === 'live' && ctx.account.status !== 'active') {
    return html`<section class="panel" aria-labelledby="create-title">
<h2 id="create-title">Create a live key</h2>
<p>Live keys wait for your account's approval. Build and test your integration with test keys first, then ask Parcel
support to approve your account; live keys can be created here as soon as it is approved.</p>
</section>`;
  }
  const form = input.form ?? { scopes: input.scopes.map((scope) => scope.name), description: '', expires: '' };
  const param = input.error?.param;
  return html`<section class="panel" aria-labelledby="create-title">
<h2 id="create-title">Create a ${ctx.mode} key</h2>
<form method="post" action="${paths.keys(ctx.mode)}" class="stack" novalidate>
${errorSummary(input.error, { scopes: 'scope-0', description: 'key-description', expires: 'key-expires' })}
${csrfField(ctx.csrfToken)}
${checkboxGroup({
  legend: 'Permissions',
  name: 'scopes',
  idPrefix: 'scope',
  hint: 'Give a key only what the system using it needs.',
  invalid: param === 'scopes',
  options: input.scopes.map((scope) => ({
    value: scope.name,
    label: scope.name,
    hint: scope.description,
    checked: form.scopes.includes(scope.name),
  })),
})}
${field({
  id: 'key-description',
  name: 'description',
  label: 'Description',
  value: form.description,
  hint: 'Where the key is used, e.g. "Checkout server".',
  maxLength: 500,
  invalid: param === 'description',
})}
${field({
  id: 'key-expires',
  name: 'expires',
  label: 'Expires on',
  type: 'date',
  value: form.expires,
  hint: 'The key stops working at 00:00 UTC that day. Leave empty for a key that does not expire.',
  invalid: param === 'expires',
})}
<div class="actions"><button type="submit">Create key</button></div>
</form>
</section>`;
}

function rotationHelp(mode: Mode): Html {
  return html`<details class="help">
<summary>Rotating a key without downtime</summary>
<ol>
<li>Create the replacement ${mode} key here.</li>
<li>Deploy it where the old key is used.</li>
<li>Watch its <strong>Last used</strong> column move, which confirms the new key is in use.</li>
<li>Revoke the old key. Revocation is immediate.</li>
</ol>
</details>`;
}

export function keysPage(ctx: PageContext, input: KeysPageInput): Html {
  const now = ctx.now ?? new Date();
  const created = input.created
    ? shownOnce({
        id: 'new-key',
        title: `Your new ${ctx.mode} key`,
        label: 'New key',
        value: input.created.key,
        explanation: html`Copy it now and keep it somewhere safe: <strong>it is shown only this once</strong>. Then deploy it
and check below that its <strong>Last used</strong> moves before you revoke the key it replaces.`,
      })
    : '';
  return layout(ctx, {
    title: 'API keys',
    section: 'keys',
    body: html`${created}
<p class="lede">Keys authenticate your systems to the Parcel API. ${ctx.mode === 'test' ? 'Test keys create nothing real.' : 'Live keys act on real parcels and money.'}</p>
${table({
  caption: `${ctx.mode === 'test' ? 'Test' : 'Live'} keys`,
  head: [
    'Key',
    'Description',
    'Permissions',
    'Created',
    'Last used',
    'Expires',
    'Status',
    html`<span class="visually-hidden">Actions</span>`,
  ],
  rows: input.keys.map((key) => keyRow(ctx, key, now)),
  empty: `No ${ctx.mode} keys yet.`,
})}
${rotationHelp(ctx.mode)}
${createForm(ctx, input)}`,
  });
}
