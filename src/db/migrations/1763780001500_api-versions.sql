-- Up Migration

-- The API version an endpoint receives its events in (core/versions). Endpoints registered before versions existed
-- keep the shapes they were built against, the first version; one registered without naming a version gets the
-- newest (the API always names one). Both defaults are catalogue-only changes: no table rewrite.
ALTER TABLE webhook_endpoints ADD COLUMN api_version text NOT NULL DEFAULT '2026-11-21';
ALTER TABLE webhook_endpoints ALTER COLUMN api_version SET DEFAULT '2026-12-01';

-- The version a delivery renders its event in, the endpoint's when the delivery was made: a change of the
-- endpoint's version applies to deliveries made after it. NULL (deliveries made before): the endpoint's version.
ALTER TABLE deliveries ADD COLUMN api_version text;

-- Events are stored in the newest version's shape: a settlement names its parcel in data.parcel.
UPDATE events e
   SET body = jsonb_set(s.j #- '{data,cod_settlement,parcel_id}' #- '{data,cod_settlement,parcel_number}', '{data,parcel}',
                        jsonb_build_object('id', s.j #> '{data,cod_settlement,parcel_id}',
                                           'parcel_number', s.j #> '{data,cod_settlement,parcel_number}'))::text
  FROM (SELECT id, body::jsonb AS j FROM events WHERE type = 'cod.settled') s
 WHERE e.id = s.id AND s.j #> '{data,parcel}' IS NULL AND s.j #> '{data,cod_settlement,parcel_id}' IS NOT NULL;

-- Down Migration

UPDATE events e
   SET body = jsonb_set(s.j #- '{data,parcel}', '{data,cod_settlement}',
                        (s.j #> '{data,cod_settlement}')
                          || jsonb_build_object('parcel_id', s.j #> '{data,parcel,id}',
                                                'parcel_number', s.j #> '{data,parcel,parcel_number}'))::text
  FROM (SELECT id, body::jsonb AS j FROM events WHERE type = 'cod.settled') s
 WHERE e.id = s.id AND s.j #> '{data,parcel}' IS NOT NULL;

ALTER TABLE deliveries DROP COLUMN api_version;
ALTER TABLE webhook_endpoints DROP COLUMN api_version;
