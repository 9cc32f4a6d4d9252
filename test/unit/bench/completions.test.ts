import type { WorkflowInfo } from '@temporalio/workflow';
import { describe, expect, it } from 'vitest';
import { Completions } from '../../../bench/completions';

const STARTED = Date.parse('2026-11-28T00:00:00Z');

/** A clock at 40 ms past every workflow's start. */
const clock = () => STARTED + 40;

/** What the worker does with a sink call: the function, with the calling workflow's info. */
function report(completions: Completions, workflowId: string, failed: boolean, workflowType = 'deliverEvent'): void {
  void completions.sinks.benchCompletion.finished.fn(
    { workflowId, workflowType, startTime: new Date(STARTED) } as WorkflowInfo,
    failed,
  );
}

describe('bench completions', () => {
  it('resolves with the life of the workflow, from its start to the report that it returned', async () => {
    let now = STARTED + 1_250;
    const completions = new Completions(() => now);
    const done = completions.waitFor('event:evt_life');
    report(completions, 'event:evt_life', false);
    now += 5_000;
    await expect(done).resolves.toBe(1_250);
  });

  it('resolves a wait for a workflow that finishes later', async () => {
    const completions = new Completions(clock);
    const done = completions.waitFor('event:evt_1');
    report(completions, 'event:evt_1', false);
    await expect(done).resolves.toBe(40);
  });

  it('resolves a wait for a workflow that finished before anyone waited', async () => {
    const completions = new Completions(clock);
    report(completions, 'event:evt_2', false);
    await expect(completions.waitFor('event:evt_2')).resolves.toBe(40);
  });

  it('rejects for a workflow that threw, before or after the wait began', async () => {
    const completions = new Completions(clock);
    const waiting = completions.waitFor('event:evt_3');
    report(completions, 'event:evt_3', true);
    await expect(waiting).rejects.toThrow('event:evt_3 failed');
    report(completions, 'event:evt_4', true);
    await expect(completions.waitFor('event:evt_4')).rejects.toThrow('event:evt_4 failed');
  });

  it('keeps other workflows apart', async () => {
    const completions = new Completions(clock);
    const first = completions.waitFor('bare:a');
    const second = completions.waitFor('bare:b');
    report(completions, 'bare:b', false);
    await expect(second).resolves.toBe(40);
    let settled = false;
    void first.then(() => (settled = true));
    await Promise.resolve();
    expect(settled).toBe(false);
    report(completions, 'bare:a', false);
    await expect(first).resolves.toBe(40);
  });

  it('counts the completed workflows of each type, not the failed ones', () => {
    const completions = new Completions(clock);
    report(completions, 'event:evt_5', false);
    report(completions, 'event:evt_6', false);
    report(completions, 'event:evt_7', true);
    report(completions, 'bare:c', false, 'bareWorkflow');
    expect(completions.completed('deliverEvent')).toBe(2);
    expect(completions.completed('bareWorkflow')).toBe(1);
    expect(completions.completed('eagerPostWorkflow')).toBe(0);
    void completions.waitFor('event:evt_7').catch(() => undefined);
  });
});
