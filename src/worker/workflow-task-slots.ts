import type { CustomSlotSupplier, SlotPermit, WorkflowSlotInfo } from '@temporalio/worker';

/**
 * The worker's workflow-task slots, in bounds that keep each task short. A workflow task is CPU work in the
 * worker's one workflow thread, a few milliseconds each: tasks handed to it past what it runs in a moment only
 * queue there, and each one's duration (what the Temporal UI shows and the SDK warns about past 5 s) grows with the
 * queue. So the tasks the worker polls for (a timer fired, an attempt answered, a signal) are held to `polled` at
 * once, and past it wait on the server, where Temporal queues them. A start's first task handed back with the start
 * (the outbox's eager starts, `tryReserveSlot`) takes any slot free of `total`: refused, it would go through
 * matching instead, which costs Temporal and the worker half again as much CPU per delivery under load. The outbox
 * keeps those starts to `starts` at once instead (`startRoom`), counting both the starts Temporal has not answered
 * and the first tasks they brought back still running: a burst of starts (two hundred slow receivers answering
 * together) waits in the outbox, not in the workflow thread.
 */
export interface WorkflowTaskSlots {
  supplier: CustomSlotSupplier<WorkflowSlotInfo>;
  /**
   * Slots a polled task could take now. The SDK reports no `temporal_worker_task_slots_available` for a custom
   * supplier: the worker's metrics page reports this instead (infra/metrics.ts).
   */
  available(): number;
  /** Waits for room for one more start; the returned function is called once Temporal has answered it. */
  startRoom(): Promise<() => void>;
}

export interface WorkflowTaskBounds {
  total: number;
  polled: number;
  starts: number;
}

export function workflowTaskSlots({ total, polled, starts }: WorkflowTaskBounds): WorkflowTaskSlots {
  let inUse = 0;
  let polledInUse = 0;
  let eagerInUse = 0;
  let starting = 0;
  const waiting: Array<() => void> = [];
  const startsWaiting: Array<() => void> = [];
  const free = () => inUse < total && polledInUse < polled;
  const startFits = () => starting + eagerInUse < starts;
  const wakeNext = () => {
    while (waiting.length > 0 && free()) (waiting.shift() as () => void)();
  };
  const wakeStarts = () => {
    while (startsWaiting.length > 0 && startFits()) (startsWaiting.shift() as () => void)();
  };
  const supplier: CustomSlotSupplier<WorkflowSlotInfo> = {
    type: 'custom',
    reserveSlot(_ctx, abortSignal) {
      return new Promise<SlotPermit>((resolve, reject) => {
        const grant = () => {
          abortSignal.removeEventListener('abort', abort);
          inUse++;
          polledInUse++;
          resolve({ polled: true });
        };
        const abort = () => {
          const index = waiting.indexOf(grant);
          if (index >= 0) waiting.splice(index, 1);
          reject(abortSignal.reason);
        };
        if (abortSignal.aborted) return reject(abortSignal.reason);
        if (free() && waiting.length === 0) return grant();
        abortSignal.addEventListener('abort', abort, { once: true });
        waiting.push(grant);
      });
    },
    tryReserveSlot() {
      if (inUse >= total) return null;
      inUse++;
      eagerInUse++;
      return { polled: false };
    },
    markSlotUsed() {},
    releaseSlot({ permit }) {
      inUse--;
      if ((permit as { polled?: boolean }).polled) polledInUse--;
      else {
        eagerInUse--;
        wakeStarts();
      }
      wakeNext();
    },
  };
  const startRoom = () =>
    new Promise<() => void>((resolve) => {
      const go = () => {
        starting++;
        let answered = false;
        resolve(() => {
          if (answered) return;
          answered = true;
          starting--;
          wakeStarts();
        });
      };
      if (startFits() && startsWaiting.length === 0) go();
      else startsWaiting.push(go);
    });
  return { supplier, available: () => Math.max(0, Math.min(total - inUse, polled - polledInUse)), startRoom };
}
