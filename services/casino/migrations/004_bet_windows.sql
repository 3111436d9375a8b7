-- E2: a bettor whose time ran out while Postgres was away gets the bet's whole window again once it is
-- back: the window as the table gave it (its deadline less the CasinoOpened's own time), kept with the bet
-- (NULL for bets opened before: their window is counted from the row's creation).
ALTER TABLE bets ADD COLUMN window_ms bigint;
