-- E5: a paused game stops the current bidder's clock; the time left is kept while paused.
ALTER TABLE auctions ADD COLUMN paused_left_ms bigint;  -- wall ms the bidder had left; NULL: running
