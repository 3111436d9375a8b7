-- A proposal asked again with the caller's request id (its answer lost) answers the proposal made
-- then: one per (table, proposer, request id).
ALTER TABLE trades ADD COLUMN request_id text;
CREATE UNIQUE INDEX trades_request ON trades (table_id, proposer, request_id) WHERE request_id IS NOT NULL;
