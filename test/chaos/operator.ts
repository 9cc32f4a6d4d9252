import { execFile } from 'node:child_process';
import type { Rng } from './rng';
import { log } from './runtime';
import { planEvents } from './traffic';
import { cliEntry, ROOT, type EventType } from './wiring';

/**
 * An operator publishing by hand with `npx parcel-webhooks events publish`, without an id and without
 * retrying, as the CLI and the simulator do: once the command has stored the event, the
 * event is a promise, whatever happens to the command afterwards.
 */

export interface OperatorPublish {
  type: EventType;
  startedAt: number;
  endedAt: number;
  /** The id the command printed (exit 0). */
  eventId?: string;
  /** Why it failed: exit code and last line, or the timeout. */
  error?: string;
}

export const OPERATOR_TIMEOUT_MS = 30_000;

export async function operatorPublish(options: {
  env: Record<string, string>;
  accountId: string;
  rng: Rng;
  seed: number;
}): Promise<OperatorPublish> {
  const [planned] = planEvents(options.rng, options.seed, 1, 0);
  if (!planned) throw new Error('no event planned');
  const startedAt = Date.now();
  const args = [
    cliEntry(),
    'events',
    'publish',
    '--account',
    options.accountId,
    '--mode',
    'test',
    '--type',
    planned.type,
    '--data',
    JSON.stringify(planned.data),
    '--json',
  ];
  const result = await new Promise<OperatorPublish>((resolve) => {
    execFile(
      process.execPath,
      args,
      {
        cwd: ROOT,
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_LEVEL: 'warn', ...options.env },
        timeout: OPERATOR_TIMEOUT_MS,
        killSignal: 'SIGKILL',
      },
      (err, stdout, stderr) => {
        const endedAt = Date.now();
        if (!err) {
          try {
            const eventId = String((JSON.parse(stdout) as { id: unknown }).id);
            resolve({ type: planned.type, startedAt, endedAt, eventId });
            return;
          } catch {
            resolve({ type: planned.type, startedAt, endedAt, error: `exit 0 but no JSON: ${stdout.slice(0, 120)}` });
            return;
          }
        }
        const e = err as Error & { killed?: boolean; code?: number | string };
        // With --json the CLI prints its error as one JSON document on stdout.
        let message = `${stderr}`.trim().split('\n').pop() ?? '';
        try {
          const doc = JSON.parse(stdout) as { error?: { code?: string; message?: string } };
          if (doc.error) message = `${doc.error.code ?? ''} ${doc.error.message ?? ''}`.trim();
        } catch {
          // not JSON: keep stderr's last line
        }
        const error = e.killed
          ? `no result within ${OPERATOR_TIMEOUT_MS / 1000} s (killed)`
          : `exit ${e.code ?? '?'}: ${message.slice(0, 200)}`;
        resolve({ type: planned.type, startedAt, endedAt, error });
      },
    );
  });
  log(`operator: events publish ${planned.type} -> ${result.eventId ?? result.error}`);
  return result;
}
