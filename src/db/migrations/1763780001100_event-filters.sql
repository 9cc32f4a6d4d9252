-- Up Migration

-- The parcel an event is about, as the events list finds it: its id, number and tracking number (parcel
-- events), or the parcel id and number of a settlement. Read from the stored body, so nothing else stores it.
CREATE FUNCTION event_parcel_refs(body text) RETURNS text[]
  LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT array_remove(ARRAY[
           j #>> '{data,parcel,id}', j #>> '{data,parcel,parcel_number}', j #>> '{data,parcel,tracking_number}',
           j #>> '{data,cod_settlement,parcel_id}', j #>> '{data,cod_settlement,parcel_number}'
         ], NULL)
    FROM (SELECT body::jsonb AS j) parsed
$$;
CREATE INDEX events_parcel_refs_idx ON events USING gin (event_parcel_refs(body));

-- Events not delivered (retrying or abandoned) are found from their unfinished deliveries, newest events first,
-- instead of reading every event of the account.
CREATE INDEX deliveries_unfinished_idx ON deliveries (account_id, livemode, event_id) WHERE status IN ('pending', 'failed');

-- Down Migration

DROP INDEX deliveries_unfinished_idx;
DROP INDEX events_parcel_refs_idx;
DROP FUNCTION event_parcel_refs(text);
