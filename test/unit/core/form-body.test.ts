import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../src/core/errors';
import { countFormFields, MAX_FORM_FIELDS, parseForm } from '../../../src/core/form-body';

describe('parseForm', () => {
  it('keeps every value of a repeated field, in order, and the first value of a field as a string', () => {
    const body = parseForm('events=a&url=https%3A%2F%2Fx&events=b&events=c&__proto__=p');
    expect(body.events).toEqual(['a', 'b', 'c']);
    expect(body.url).toBe('https://x');
    expect(body.__proto__).toBe('p');
    expect(Object.getPrototypeOf(body)).toBeNull();
  });

  it('counts the fields by their separators, without decoding', () => {
    expect(countFormFields('')).toBe(1);
    expect(countFormFields('a=1')).toBe(1);
    expect(countFormFields('a&a&a')).toBe(3);
    expect(countFormFields('&&')).toBe(3);
  });

  it('refuses a form of more than MAX_FORM_FIELDS fields as body_too_large (413), and reads one of exactly that many', () => {
    expect(Object.keys(parseForm(Array.from({ length: MAX_FORM_FIELDS }, (_, i) => `f${i}=1`).join('&')))).toHaveLength(
      MAX_FORM_FIELDS,
    );
    const refused = (() => {
      try {
        parseForm('a&'.repeat(MAX_FORM_FIELDS));
      } catch (err) {
        return err;
      }
      return undefined;
    })();
    expect(refused).toBeInstanceOf(ApiError);
    expect(refused).toMatchObject({ code: 'body_too_large', status: 413 });
  });

  it('reads one field repeated thousands of times into one list of every value, the cap lifted', () => {
    // Its cost per byte against a small body's is the bench's figure (`npm run bench -- body-parsing`).
    const body = parseForm('a&'.repeat(32_000), Number.POSITIVE_INFINITY);
    expect(body.a).toHaveLength(32_000);
  });
});
