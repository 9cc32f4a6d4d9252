import { ApiError } from './errors';

/** A posted form: repeated fields (checkboxes) keep every value. */
export type FormBody = Record<string, string | string[]>;

/**
 * The most fields a form of the developers page may post: the largest form (an endpoint's, every event type
 * ticked and its 20 custom headers filled) has well under a hundred. Past it the body is refused before it is
 * decoded.
 */
export const MAX_FORM_FIELDS = 1_000;

/** Upper bound of the fields in an urlencoded body: its `&` separators plus one, counted without parsing. */
export function countFormFields(text: string): number {
  let count = 1;
  for (let at = text.indexOf('&'); at !== -1; at = text.indexOf('&', at + 1)) count++;
  return count;
}

/**
 * Reads an urlencoded body in time linear in its length: a repeated field's values are pushed onto one array,
 * never copied. A body with more than `maxFields` fields is refused (413) after one cheap count, before any
 * decoding.
 */
export function parseForm(text: string, maxFields: number = MAX_FORM_FIELDS): FormBody {
  if (countFormFields(text) > maxFields) {
    throw new ApiError('body_too_large', `A form may post at most ${maxFields.toLocaleString('en')} fields.`);
  }
  const body: FormBody = Object.create(null) as FormBody;
  for (const [name, value] of new URLSearchParams(text)) {
    const seen = body[name];
    if (seen === undefined) body[name] = value;
    else if (Array.isArray(seen)) seen.push(value);
    else body[name] = [seen, value];
  }
  return body;
}
