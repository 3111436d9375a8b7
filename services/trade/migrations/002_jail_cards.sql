-- T2 (hasbro): Get Out of Jail Free cards (card ids) on each side of a trade.
ALTER TABLE trades ADD COLUMN give_cards integer[] NOT NULL DEFAULT '{}';  -- from the proposer
ALTER TABLE trades ADD COLUMN take_cards integer[] NOT NULL DEFAULT '{}';  -- from the counterparty
