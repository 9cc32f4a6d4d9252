import { flag, html, type Child, type Html } from './html';
import { csrfField } from './layout';
import { fieldName } from './messages';
import type { FormError } from './models';

/** The form error, at the top of its form, linked to the field at fault. Focused by app.js. */
export function errorSummary(error: FormError | undefined, fieldIds: Record<string, string> = {}): Html | undefined {
  if (!error) return undefined;
  const target = error.param ? fieldIds[error.param] : undefined;
  return html`<div class="error-summary" role="alert" tabindex="-1" data-autofocus>
<p><strong>That did not work.</strong> ${error.message}</p>
${target && error.param ? html`<p><a href="#${target}">Go to ${fieldName(error.param)}</a></p>` : ''}
</div>`;
}

export interface FieldInput {
  id: string;
  name: string;
  label: string;
  type?: 'text' | 'url' | 'datetime-local' | 'date';
  value?: string;
  hint?: string;
  required?: boolean;
  /** The error is this field's: it is marked invalid and described by the message. */
  invalid?: boolean;
  placeholder?: string;
  maxLength?: number;
  autocomplete?: string;
}

export function field(input: FieldInput): Html {
  const hintId = input.hint ? `${input.id}-hint` : undefined;
  return html`<div class="field${input.invalid ? ' invalid' : ''}">
<label for="${input.id}">${input.label}${input.required ? '' : html` <span class="muted">(optional)</span>`}</label>
${input.hint ? html`<p class="hint" id="${hintId}">${input.hint}</p>` : ''}
<input id="${input.id}" name="${input.name}" type="${input.type ?? 'text'}" value="${input.value ?? ''}"${flag('required', input.required)}${flag('aria-invalid="true"', input.invalid)}${input.maxLength ? html` maxlength="${input.maxLength}"` : ''}${input.placeholder ? html` placeholder="${input.placeholder}"` : ''}${hintId ? html` aria-describedby="${hintId}"` : ''} autocomplete="${input.autocomplete ?? 'off'}">
</div>`;
}

export interface CheckboxOption {
  value: string;
  label: string;
  hint?: string;
  checked: boolean;
}

export function checkboxGroup(input: {
  legend: string;
  name: string;
  idPrefix: string;
  options: CheckboxOption[];
  hint?: string;
  invalid?: boolean;
}): Html {
  return html`<fieldset class="checks${input.invalid ? ' invalid' : ''}">
<legend>${input.legend}</legend>
${input.hint ? html`<p class="hint">${input.hint}</p>` : ''}
${input.options.map(
  (option, index) => html`<div class="check">
<input type="checkbox" id="${input.idPrefix}-${index}" name="${input.name}" value="${option.value}"${flag('checked', option.checked)}>
<label for="${input.idPrefix}-${index}"><code>${option.label}</code>${option.hint ? html` <span class="muted">${option.hint}</span>` : ''}</label>
</div>`,
)}
</fieldset>`;
}

export function selectField(input: {
  id: string;
  name: string;
  label: string;
  options: { value: string; label: string }[];
  selected?: string;
  hint?: string;
}): Html {
  return html`<div class="field">
<label for="${input.id}">${input.label}</label>
${input.hint ? html`<p class="hint" id="${input.id}-hint">${input.hint}</p>` : ''}
<select id="${input.id}" name="${input.name}"${input.hint ? html` aria-describedby="${input.id}-hint"` : ''}>
${input.options.map((option) => html`<option value="${option.value}"${flag('selected', option.value === input.selected)}>${option.label}</option>`)}
</select>
</div>`;
}

/**
 * A one-button form for a destructive action. Without script the server answers with a confirmation page;
 * app.js asks in a dialog first and then sends `confirm=yes` with the form.
 */
export function confirmForm(input: {
  action: string;
  csrfToken: string;
  label: string;
  /** Names the thing acted on, for screen readers ("Revoke key ending 3f9A"). */
  accessibleLabel?: string;
  question: string;
  consequence: string;
  danger?: boolean;
  fields?: Record<string, string>;
}): Html {
  return html`<form method="post" action="${input.action}" class="inline" data-confirm="${input.consequence}" data-confirm-title="${input.question}" data-confirm-label="${input.label}">
${csrfField(input.csrfToken)}
${Object.entries(input.fields ?? {}).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`)}
<button type="submit" class="${input.danger ? 'danger' : 'secondary'} small"${input.accessibleLabel ? html` aria-label="${input.accessibleLabel}"` : ''}>${input.label}</button>
</form>`;
}

/** A secret shown once (a key, a signing secret), selectable, with a copy button that app.js reveals. */
export function shownOnce(input: {
  id: string;
  label: string;
  value: string;
  title: string;
  explanation: Child;
}): Html {
  return html`<section class="once" aria-labelledby="${input.id}-title">
<h2 id="${input.id}-title">${input.title}</h2>
<p>${input.explanation}</p>
<label for="${input.id}">${input.label}</label>
<div class="copy-row">
<input id="${input.id}" class="secret" type="text" readonly value="${input.value}" spellcheck="false" autocomplete="off">
<button type="button" data-copy="${input.id}" hidden>Copy</button>
</div>
<p class="copy-status muted" role="status" aria-live="polite"></p>
</section>`;
}

/** A table that scrolls sideways on a narrow screen instead of widening the page; reachable by keyboard. */
export function table(input: {
  caption: string;
  head: Child[];
  rows: Html[];
  empty: Child;
  captionHidden?: boolean;
}): Html {
  if (input.rows.length === 0) return html`<p class="empty">${input.empty}</p>`;
  return html`<div class="table-wrap" role="region" aria-label="${input.caption}" tabindex="0">
<table>
<caption${flag('class="visually-hidden"', input.captionHidden)}>${input.caption}</caption>
<thead><tr>${input.head.map((cell) => html`<th scope="col">${cell}</th>`)}</tr></thead>
<tbody>${input.rows}</tbody>
</table>
</div>`;
}

export function badge(text: string, tone: 'ok' | 'warn' | 'danger' | 'muted' | 'info'): Html {
  return html`<span class="badge badge-${tone}">${text}</span>`;
}

/** "Next page" and "First page" links for cursor lists (newest first). */
export function pager(input: { firstHref: string; nextHref?: string; onFirstPage: boolean }): Html | undefined {
  if (input.onFirstPage && !input.nextHref) return undefined;
  return html`<nav class="pager" aria-label="Pages">
${input.onFirstPage ? '' : html`<a href="${input.firstHref}">Newest</a>`}
${input.nextHref ? html`<a href="${input.nextHref}" rel="next">Older</a>` : ''}
</nav>`;
}
