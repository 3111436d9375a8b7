-- A3: a hasbro trade, build or mortgage during the auction changes what a bidder could pay; the table
-- sends the new limits (AuctionLimitsChanged). The table seq they came with: an older copy changes nothing.
ALTER TABLE auctions ADD COLUMN limits_seq bigint NOT NULL DEFAULT 0;  -- 0: the limits of AuctionStarted
