import type { Client } from '@temporalio/client';
import type { Agent } from 'undici';
import type { DeliveryActivities } from '../core/delivery-contract';
import { databaseVersion, type Pool } from '../domain/database';
import type { Config } from '../infra/config';
import type { Mailer } from '../infra/mailer';
import { createParcelOrderActivities } from './parcel-order';
import { createRecordAttempt, createRecordExpiry } from './record-attempt';
import { createRetentionActivities } from './retention';
import { createSignAndPost } from './sign-and-post';
import { createSupervisorActivities } from './supervisor';

export interface ActivityDeps {
  config: Config;
  pool: Pool;
  /** The worker's one pooled HTTP agent (infra/http-client.ts). */
  http: Agent;
  /** For signal-with-start of endpoint supervisors. */
  temporal?: Client;
  /** Built from SMTP_URL when set. */
  mailer?: Mailer;
}

/** Activities come from a factory over their dependencies; the worker builds those, tests may pass their own. */
export function createActivities(deps: ActivityDeps): DeliveryActivities {
  return {
    async probeDatabase(): Promise<string> {
      return databaseVersion(deps.pool);
    },
    signAndPost: createSignAndPost(deps),
    recordAttempt: createRecordAttempt(deps),
    recordExpiry: createRecordExpiry(deps),
    ...createSupervisorActivities(deps),
    ...createRetentionActivities(deps),
    ...createParcelOrderActivities(deps),
  };
}
