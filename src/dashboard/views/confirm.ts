import { html, type Html } from './html';
import { csrfField, layout } from './layout';
import type { PageContext, Section } from './models';

/**
 * The question a destructive form asks when it arrives without `confirm=yes`: what app.js asks in a dialog,
 * as a page, so the action is confirmed with or without script.
 */
export function confirmPage(
  ctx: PageContext,
  input: {
    section: Section;
    question: string;
    consequence: string;
    action: string;
    confirmLabel: string;
    cancelHref: string;
    danger?: boolean;
    fields?: Record<string, string>;
  },
): Html {
  return layout(ctx, {
    title: input.question,
    section: input.section,
    body: html`<p>${input.consequence}</p>
<form method="post" action="${input.action}" class="button-row">
${csrfField(ctx.csrfToken)}
<input type="hidden" name="confirm" value="yes">
${Object.entries(input.fields ?? {}).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`)}
<button type="submit" class="${input.danger ? 'danger' : ''}">${input.confirmLabel}</button>
<a class="button secondary" href="${input.cancelHref}">Cancel</a>
</form>`,
  });
}
