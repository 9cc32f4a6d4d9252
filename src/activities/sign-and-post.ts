import { log } from '@temporalio/activity';
import type { AttemptOutcome, SignAndPostInput } from '../core/delivery-contract';
import { workflowTry, type TryDeps } from '../attempt';

/**
 * The workflow's try of an attempt (attempt/try.ts): check, sign, post and record in one activity, so a
 * successful delivery costs one activity and two queries. Its warnings go to the activity's log.
 */
export function createSignAndPost(deps: Omit<TryDeps, 'log'>) {
  return async function signAndPost(input: SignAndPostInput): Promise<AttemptOutcome> {
    return workflowTry({ ...deps, log }, input);
  };
}
