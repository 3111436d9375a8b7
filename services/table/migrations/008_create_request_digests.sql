-- CreateTable's request_id is bound to the whole request (mode, players, seed, clock scale, external
-- sub-protocols, settings): the same key with any of them changed is ALREADY_EXISTS, not the first
-- table. Rows made before this column keep NULL and are matched on mode and players as before.
ALTER TABLE tables ADD COLUMN IF NOT EXISTS request_digest text;
