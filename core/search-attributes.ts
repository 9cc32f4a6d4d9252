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
