-- CreateTable's request_id (table.proto): a call asked again after its answer was lost answers the
-- table it made then, never a second one. Tables made without one leave it NULL.
ALTER TABLE tables ADD COLUMN IF NOT EXISTS request_id text;
CREATE UNIQUE INDEX IF NOT EXISTS tables_request_id ON tables (request_id) WHERE request_id IS NOT NULL;
