-- XP's round bonus counts the rounds a player played: the round in which each seat went out
-- (PlayerBankrupt, a leaver's too, R3), by seat as text; seats still in at the end are absent.
ALTER TABLE tables ADD COLUMN rounds_out jsonb NOT NULL DEFAULT '{}'::jsonb;
