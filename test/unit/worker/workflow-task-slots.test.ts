import { describe, expect, it } from 'vitest';
import type { SlotPermit, SlotReserveContext } from '@temporalio/worker';
import { workflowTaskSlots } from '../../../src/worker/workflow-task-slots';

const ctx = { slotType: 'workflow', taskQueue: 'q', workerIdentity: 'w', workerBuildId: '' } as SlotReserveContext;
const release = (slots: ReturnType<typeof workflowTaskSlots>, permit: SlotPermit) =>
  slots.supplier.releaseSlot({ permit });
/** Whether the promise has settled by the time the queued callbacks have run. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(
    () => (done = true),
    () => (done = true),
  );
  await new Promise((resolve) => setImmediate(resolve));
  return done;
}

describe('workflowTaskSlots', () => {
  it('holds polled tasks to their bound, and lets a start take any slot of the total', async () => {
    const slots = workflowTaskSlots(4, 2);
    const { supplier } = slots;
    expect(slots.available()).toBe(2);
    const polled = [
      await supplier.reserveSlot(ctx, new AbortController().signal),
      await supplier.reserveSlot(ctx, new AbortController().signal),
    ];
    const third = supplier.reserveSlot(ctx, new AbortController().signal);
    expect(await settled(third)).toBe(false);
    // Starts take the rest of the total, then are refused (they go through matching).
    const eager = [supplier.tryReserveSlot(ctx), supplier.tryReserveSlot(ctx)];
    expect(eager.every((permit) => permit !== null)).toBe(true);
    expect(supplier.tryReserveSlot(ctx)).toBeNull();
    expect(slots.available()).toBe(0);
    // A start's slot given back frees no polled one; a polled slot given back lets the waiting poll in once the
    // total has room too.
    release(slots, eager[0]!);
    expect(await settled(third)).toBe(false);
    release(slots, polled[0]!);
    expect(await settled(third)).toBe(true);
    expect(slots.available()).toBe(0);
    // Three of four in use: one start more, then none.
    expect(supplier.tryReserveSlot(ctx)).not.toBeNull();
    expect(supplier.tryReserveSlot(ctx)).toBeNull();
  });

  it('gives up a poll the SDK aborts, without taking its slot', async () => {
    const slots = workflowTaskSlots(2, 1);
    const { supplier } = slots;
    const held = await supplier.reserveSlot(ctx, new AbortController().signal);
    const controller = new AbortController();
    const aborted = supplier.reserveSlot(ctx, controller.signal);
    controller.abort(new Error('no longer needed'));
    await expect(aborted).rejects.toThrow('no longer needed');
    const next = supplier.reserveSlot(ctx, new AbortController().signal);
    release(slots, held);
    expect(await settled(next)).toBe(true);
    // The aborted poll took nothing: one start still fits in the total of two.
    expect(supplier.tryReserveSlot(ctx)).not.toBeNull();
  });
});
