-- K4 with R3: a bet the table never applied (its bettor left, or the game ended, before the result
-- reached it) is void: the pool goes back to what it was, so the service's pool stays the table's.
-- `applied`: the table's own BetSettled for the bet was seen on its stream.
ALTER TABLE bets DROP CONSTRAINT bets_status_check;
ALTER TABLE bets ADD CONSTRAINT bets_status_check CHECK (status IN ('open', 'settled', 'declined', 'void'));
ALTER TABLE bets ADD COLUMN applied boolean NOT NULL DEFAULT false;
