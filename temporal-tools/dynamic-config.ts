import { readFileSync } from 'node:fs';
import { parse } from 'yaml';

/**
 * The values of a Temporal dynamic config file (deploy/temporal/dynamicconfig.yaml): key -> its value for every
 * namespace and task queue (the first entry, which our file gives with no constraints). The full server and
 * docker-compose read the file itself; the dev server, which takes no file, gets these as flags.
 */
export function dynamicConfigValues(file: string): Record<string, unknown> {
  const doc = parse(readFileSync(file, 'utf8')) as Record<string, { value: unknown; constraints?: object }[]>;
  return Object.fromEntries(Object.entries(doc).map(([key, entries]) => [key, entries[0]?.value]));
}
