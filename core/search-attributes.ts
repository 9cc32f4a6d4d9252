import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/** Custom search attributes, so operators can find workflows by account, mode, endpoint, event id and kind. */
export const SA_ACCOUNT_ID = defineSearchAttributeKey('ParcelAccountId', SearchAttributeType.KEYWORD);
export const SA_LIVEMODE = defineSearchAttributeKey('ParcelLivemode', SearchAttributeType.BOOL);
export const SA_EVENT_ID = defineSearchAttributeKey('ParcelEventId', SearchAttributeType.KEYWORD);
export const SA_EVENT_TYPE = defineSearchAttributeKey('ParcelEventType', SearchAttributeType.KEYWORD);
export const SA_ENDPOINT_IDS = defineSearchAttributeKey('ParcelEndpointIds', SearchAttributeType.KEYWORD_LIST);

/** Name -> CLI type, for `temporal server start-dev --search-attribute` and the operator API. */
export const SEARCH_ATTRIBUTE_DEFINITIONS: Record<string, 'Keyword' | 'Bool' | 'KeywordList'> = {
  ParcelAccountId: 'Keyword',
  ParcelLivemode: 'Bool',
  ParcelEventId: 'Keyword',
  ParcelEventType: 'Keyword',
  ParcelEndpointIds: 'KeywordList',
};

/**
 * Temporal refuses to start a workflow whose search attribute value is over 2 KB (dynamic config
 * limit.searchAttributesSizeOfValueLimit, the same default on the dev server and a self-hosted cluster), measured
 * on the JSON payload. A keyword list of endpoint ids reaches it at about 68 endpoints.
 */
export const SEARCH_ATTRIBUTE_VALUE_MAX_BYTES = 2 * 1024;

/**
 * The endpoint ids an event workflow is searchable by: all of them when they fit, else the first ones that do.
 * An account with a wider fan-out still gets its deliveries; past the cap, find its events by account instead.
 */
export function searchableEndpointIds(endpointIds: readonly string[]): string[] {
  const kept: string[] = [];
  let size = 2; // the list's brackets
  for (const id of endpointIds) {
    const added = Buffer.byteLength(JSON.stringify(id)) + (kept.length > 0 ? 1 : 0);
    if (size + added > SEARCH_ATTRIBUTE_VALUE_MAX_BYTES) break;
    kept.push(id);
    size += added;
  }
  return kept;
}
