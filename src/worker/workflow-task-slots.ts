import type { CustomSlotSupplier, SlotPermit, WorkflowSlotInfo } from '@temporalio/worker';

/**
 * The worker's workflow-task slots, in two bounds. A workflow task is CPU work in the worker's one workflow
 * thread, a few milliseconds each: tasks handed to it past what it runs in a moment only queue there, and each
 * one's duration (what the Temporal UI shows and the SDK warns about past 5 s) grows with the queue. So the tasks
 * the worker polls for (a timer fired, an attempt answered, a signal) are held to `polled` at once, and past it
 * wait on the server, where Temporal queues them. A start's first task handed back with the start (the outbox's
 * eager starts, `tryReserveSlot`) takes any slot free of `total`: refused, it would go through matching instead,
 * which costs Temporal and the worker a third more CPU per delivery under load.
 */
export interface WorkflowTaskSlots {
  supplier: CustomSlotSupplier<WorkflowSlotInfo>;
  /**
   * Slots a polled task could take now. The SDK reports no `temporal_worker_task_slots_available` for a custom
   * supplier: the worker's metrics page reports this instead (infra/metrics.ts).
   */
  available(): number;
}

export function workflowTaskSlots(total: number, polled: number): WorkflowTaskSlots {
  let inUse = 0;
  let polledInUse = 0;
  const waiting: Array<() => void> = [];
  const free = () => inUse < total && polledInUse < polled;
  const wakeNext = () => {
    while (waiting.length > 0 && free()) (waiting.shift() as () => void)();
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
      return { polled: false };
    },
    markSlotUsed() {},
    releaseSlot({ permit }) {
      inUse--;
      if ((permit as { polled?: boolean }).polled) polledInUse--;
      wakeNext();
    },
  };
  return { supplier, available: () => Math.max(0, Math.min(total - inUse, polled - polledInUse)) };
}
