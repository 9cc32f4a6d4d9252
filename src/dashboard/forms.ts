import type { FastifyInstance } from 'fastify';
import { ApiError } from '../core/errors';
import { parseForm, type FormBody } from '../core/form-body';
import { merchantMessage } from './views/messages';
import type { FormError } from './views/models';

export type { FormBody } from '../core/form-body';

/**
 * The page reads urlencoded forms only: every other parser (JSON and anything the API adds) is removed from its
 * context, so any other Content-Type is 415 and every field a route reads is a string, or a list of strings.
 */
export function addFormParser(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => {
    try {
      done(null, parseForm(body as string));
    } catch (err) {
      done(err as Error, undefined);
    }
  });
}

export function text(body: FormBody | undefined, name: string): string {
  const value = body?.[name];
  return (Array.isArray(value) ? value[0] : value) ?? '';
}

export function list(body: FormBody | undefined, name: string): string[] {
  const value = body?.[name];
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
}

/** An empty field is a field not given: the domain then applies its own default. */
export function optional(body: FormBody | undefined, name: string): string | undefined {
  const value = text(body, name).trim();
  return value === '' ? undefined : value;
}

/** A domain error as a form shows it; anything else is not the merchant's to fix and goes up. */
export function formError(err: unknown): FormError {
  if (err instanceof ApiError && err.status < 500) {
    return merchantMessage({
      code: err.code,
      message: err.message,
      param: typeof err.extra.param === 'string' ? err.extra.param : undefined,
    });
  }
  throw err;
}

export function errorStatus(err: unknown): number {
  return err instanceof ApiError ? err.status : 500;
}

/** `2026-03-01T09:30` from a datetime-local field, read as UTC (the form says so), in Unix seconds. */
export function utcSeconds(value: string | undefined, param: string): number | undefined {
  if (value === undefined) return undefined;
  const match = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2})(:\d{2})?$/.exec(value);
  const ms = match ? Date.parse(`${match[1]}T${match[2]}${match[3] ?? ':00'}Z`) : Number.NaN;
  if (Number.isNaN(ms)) throw new ApiError('parameter_invalid', 'Enter a date and time.', { param });
  return Math.floor(ms / 1000);
}
