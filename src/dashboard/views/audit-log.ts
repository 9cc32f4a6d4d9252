import { pager, selectField, table } from './components';
import { stamp } from './format';
import { html, type Html } from './html';
import { layout } from './layout';
import type { AuditEntryView, Page, PageContext } from './models';
import { paths } from './paths';

export interface AuditLogPageInput {
  entries: Page<AuditEntryView>;
  actions: readonly string[];
  action?: string;
  startingAfter?: string;
}

const ACTOR_LABEL: Record<AuditEntryView['actor']['type'], string> = {
  api_key: 'API key',
  dashboard: 'Developers page',
  cli: 'Operator (CLI)',
  system: 'Parcel Webhooks',
};

function actor(entry: AuditEntryView): Html {
  const id = entry.actor.id;
  return html`${ACTOR_LABEL[entry.actor.type]}${id ? html` <code>${id}</code>` : ''}`;
}

function target(ctx: PageContext, entry: AuditEntryView): Html {
  // Deleted endpoints keep their entries; the link then shows the page's not-found answer.
  return entry.target.type === 'webhook_endpoint' && entry.action !== 'endpoint.deleted'
    ? html`<a href="${paths.endpoint(ctx.mode, entry.target.id)}"><code>${entry.target.id}</code></a>`
    : html`<code>${entry.target.id}</code>`;
}

function filter(ctx: PageContext, input: AuditLogPageInput): Html {
  return html`<form method="get" action="${paths.auditLog(ctx.mode)}" class="row filter" role="search" aria-label="Filter the audit log">
${selectField({
  id: 'action',
  name: 'action',
  label: 'Action',
  selected: input.action ?? '',
  options: [{ value: '', label: 'Every action' }, ...input.actions.map((action) => ({ value: action, label: action }))],
})}
<button type="submit" class="secondary">Filter</button>
${input.action ? html`<a href="${paths.auditLog(ctx.mode)}">Clear</a>` : ''}
</form>`;
}

export function auditLogPage(ctx: PageContext, input: AuditLogPageInput): Html {
  const last = input.entries.data[input.entries.data.length - 1];
  const rows = input.entries.data.map(
    (entry) => html`<tr>
<td>${stamp(entry.created)}</td>
<td><code>${entry.action}</code>${entry.changes?.length ? html`<div class="muted small-text">${entry.changes.join(', ')}</div>` : ''}</td>
<td>${actor(entry)}</td>
<td>${target(ctx, entry)}</td>
</tr>`,
  );
  return layout(ctx, {
    title: 'Audit log',
    section: 'audit-log',
    body: html`<p class="lede">Every change to your ${ctx.mode}-mode API keys and webhook endpoints, newest first, with who made it. Changed fields are named, never their values.</p>
${filter(ctx, input)}
${table({
  caption: `${ctx.mode === 'test' ? 'Test' : 'Live'} audit log, newest first`,
  head: ['Time', 'Action', 'By', 'On'],
  rows,
  empty: input.action ? 'No entry of this action.' : `No ${ctx.mode}-mode changes yet.`,
})}
${pager({
  onFirstPage: input.startingAfter === undefined,
  firstHref: paths.auditLog(ctx.mode, { action: input.action }),
  nextHref:
    input.entries.hasMore && last
      ? paths.auditLog(ctx.mode, { action: input.action, startingAfter: last.id })
      : undefined,
})}`,
  });
}
