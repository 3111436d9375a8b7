-- One serialization of each event: a commit stores every event's protobuf `Envelope` (common.proto), the
-- very bytes its outbox batch is made of and JetStream delivers, instead of encoding the event a second
-- time as JSON. `payload` stays for the rows committed before this migration (JSON cannot be turned into
-- the envelope JetStream got in SQL: its wall time is not in the row) and is NULL in the rows after it;
-- readers take the envelope when there is one, else the JSON (servicekit.wire.stored_event). SQL still
-- has `seq`, `type` and `game_ms` of every row; an event's fields are read by decoding its envelope, or
-- from the stream into DuckDB (`monopoly export`, libs/analytics).
ALTER TABLE table_events ADD COLUMN IF NOT EXISTS envelope bytea;
ALTER TABLE table_events ALTER COLUMN payload DROP NOT NULL;
-- Every row keeps its event one way or the other; NOT VALID: the rows before this hold a payload, no scan.
ALTER TABLE table_events ADD CONSTRAINT table_events_has_event
    CHECK (envelope IS NOT NULL OR payload IS NOT NULL) NOT VALID;
