import type { NativeConnection } from '@temporalio/worker';
import { temporal } from '@temporalio/proto';
import { SEARCH_ATTRIBUTE_SDK_TYPES } from '../core/delivery-contract';

const TYPES = temporal.api.enums.v1.IndexedValueType;
/** The proto enum of a search attribute type: KEYWORD -> INDEXED_VALUE_TYPE_KEYWORD. */
const typeOf = (type: string) => TYPES[`INDEXED_VALUE_TYPE_${type}` as keyof typeof TYPES];

/**
 * Registers the project's search attributes on a self-hosted cluster (the dev server gets them as flags).
 * Temporal Cloud refuses this call: there they are added in the Cloud UI or tcld, and we only warn.
 */
export async function ensureSearchAttributes(
  connection: NativeConnection,
  namespace: string,
  warn: (msg: string) => void,
): Promise<void> {
  try {
    const existing = await connection.operatorService.listSearchAttributes({ namespace });
    const missing = Object.entries(SEARCH_ATTRIBUTE_SDK_TYPES).filter(
      ([name]) => !(name in (existing.customAttributes ?? {})),
    );
    if (missing.length === 0) return;
    await connection.operatorService.addSearchAttributes({
      namespace,
      searchAttributes: Object.fromEntries(missing.map(([name, type]) => [name, typeOf(type)])),
    });
  } catch (err) {
    warn(`worker: could not register search attributes (${(err as Error).message}); register them on the cluster`);
  }
}
