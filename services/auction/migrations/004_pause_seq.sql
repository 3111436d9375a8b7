-- E5: the table seq of the last GamePaused / GameResumed applied to the auction. A copy of an older one
-- (redelivered late, after NATS dropped its ack) changes nothing: it would stop the clock of a running game.
ALTER TABLE auctions ADD COLUMN pause_seq bigint NOT NULL DEFAULT 0;
