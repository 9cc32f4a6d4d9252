/**
 * HTML built from tagged templates: every interpolated value is escaped unless it is already Html, so a
 * merchant's description or a receiver's response body can never become markup. The only way to write raw
 * markup is `trusted()`, for constants in this folder.
 */
export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

export type Child = Html | string | number | boolean | null | undefined | readonly Child[];

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => ENTITIES[char] as string);
}

function render(child: Child): string {
  if (child instanceof Html) return child.value;
  if (Array.isArray(child)) return child.map(render).join('');
  // false, null and undefined render nothing, so `${cond && html`...`}` reads naturally.
  if (child === null || child === undefined || child === false || child === true) return '';
  return escapeHtml(String(child));
}

export function html(strings: TemplateStringsArray, ...values: Child[]): Html {
  let out = strings[0] as string;
  values.forEach((value, index) => {
    out += render(value) + (strings[index + 1] as string);
  });
  return new Html(out);
}

/** Markup written in this folder, never data. */
export function trusted(markup: string): Html {
  return new Html(markup);
}

/** `<tag attr>` for a boolean attribute, nothing otherwise. */
export function flag(name: string, on: boolean | undefined): Html {
  return new Html(on ? ` ${name}` : '');
}
