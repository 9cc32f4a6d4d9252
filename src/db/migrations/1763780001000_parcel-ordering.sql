-- Up Migration

-- Order per parcel. Every event about a parcel (data.parcel.id) carries a sequence number, 1, 2, 3 ... per
-- account, mode and parcel id, in publish order. The counter lives here; publishing increments it in the
-- statement that stores the event, so concurrent publishes of one parcel take turns on its row and get
-- distinct numbers in the order they commit. Rows are never deleted: a parcel's numbers only go up.
CREATE TABLE parcel_sequences (
  account_id     text NOT NULL,
  livemode       boolean NOT NULL,
  parcel_id      text NOT NULL,
  last_sequence  integer NOT NULL,
  PRIMARY KEY (account_id, livemode, parcel_id)
);

-- The event's parcel and number (null for events without a parcel), and the endpoints of its fan-out snapshot
-- that asked for order per parcel when it was published: their deliveries of it wait for the one before.
ALTER TABLE events ADD COLUMN parcel_id text;
ALTER TABLE events ADD COLUMN sequence integer;
ALTER TABLE events ADD COLUMN ordered_endpoint_ids text[] NOT NULL DEFAULT '{}';

-- A lane: one parcel's events in sequence order (the delivery before and after one, per endpoint).
CREATE INDEX events_parcel_lane_idx ON events (account_id, livemode, parcel_id, sequence) WHERE parcel_id IS NOT NULL;

-- 'parcel': event n+1 of a parcel is posted only once event n's delivery to this endpoint has ended.
ALTER TABLE webhook_endpoints ADD COLUMN ordering text NOT NULL DEFAULT 'none' CHECK (ordering IN ('none', 'parcel'));

-- The event an ordered delivery last found it had to wait for (shown while it has no attempt yet).
ALTER TABLE deliveries ADD COLUMN waiting_for text;

-- Down Migration

ALTER TABLE deliveries DROP COLUMN waiting_for;
ALTER TABLE webhook_endpoints DROP COLUMN ordering;
DROP INDEX events_parcel_lane_idx;
ALTER TABLE events DROP COLUMN ordered_endpoint_ids;
ALTER TABLE events DROP COLUMN sequence;
ALTER TABLE events DROP COLUMN parcel_id;
DROP TABLE parcel_sequences;
