import { ApiError } from './errors';

/** Test or live: every key, endpoint and event belongs to one mode, and a mode sees only its own. */
export type Mode = 'test' | 'live';

/** `test` or `live`, in any case and with spaces around, as operators type it. */
export function parseMode(input: string): Mode {
  const mode = input.trim().toLowerCase();
  if (mode === 'test' || mode === 'live') return mode;
  throw new ApiError('parameter_invalid', `Invalid mode ${JSON.stringify(input)}: use test or live.`, {
    param: 'mode',
  });
}
