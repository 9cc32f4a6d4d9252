import type { ChildProcess } from 'node:child_process';

/** How long a child gets to exit after the polite signal before it is SIGKILLed. */
export const STOP_GRACE_MS = 10_000;

/**
 * A stopper for a child we started: sends `signal` (SIGTERM unless told), SIGKILLs after the grace period, and
 * resolves once the child has exited. Calling it on a child that already exited resolves at once. Listens for
 * `exit` from creation, so an exit before the first call is never missed.
 */
export function childStopper(child: ChildProcess, graceMs = STOP_GRACE_MS): (signal?: NodeJS.Signals) => Promise<void> {
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return async (signal = 'SIGTERM') => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill(signal);
    const force = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(force);
  };
}
