-- The auction service's state: every auction a table opened (keyed by the table's own ids),
-- the moves made in it, and the outbox of AuctionEvents to publish.
CREATE TABLE auctions (
    table_id         text        NOT NULL,
    auction_id       bigint      NOT NULL,
    status           text        NOT NULL DEFAULT 'open',  -- open | settled | cancelled
    state            jsonb       NOT NULL,                 -- engine.state.AuctionState (codec.to_data)
    limits           jsonb       NOT NULL,                 -- per bidder, the most they could pay (A3)
    bid_ms           bigint      NOT NULL,                 -- each bidder's time in game ms (A1, E1)
    clock_scale      integer     NOT NULL,                 -- the table's game ms per wall ms (E6)
    deadline_unix_ms bigint      NOT NULL,                 -- the current bidder's wall deadline; 0 when closed
    version          bigint      NOT NULL DEFAULT 0,       -- optimistic concurrency: +1 per change
    moves            bigint      NOT NULL DEFAULT 0,       -- bids, passes and time-outs so far
    events           bigint      NOT NULL DEFAULT 0,       -- AuctionEvents written so far (n of the last event id)
    winner           integer,
    price            bigint,
    closed_by        text,                                 -- service | table | game_ended
    started_seq      bigint      NOT NULL,                 -- the table seq of its AuctionStarted
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (table_id, auction_id)
);
CREATE INDEX auctions_open ON auctions (table_id) WHERE status = 'open';

CREATE TABLE auction_moves (
    table_id   text        NOT NULL,
    auction_id bigint      NOT NULL,
    n          bigint      NOT NULL,  -- 1, 2, ...: the move's number in its auction
    seat       integer     NOT NULL,
    kind       text        NOT NULL,  -- bid | pass | timeout | withdrawn
    amount     bigint      NOT NULL DEFAULT 0,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (table_id, auction_id, n),
    FOREIGN KEY (table_id, auction_id) REFERENCES auctions (table_id, auction_id)
);

CREATE TABLE IF NOT EXISTS outbox (
    id         bigserial   PRIMARY KEY,
    subject    text        NOT NULL,
    msg_id     text        NOT NULL,
    payload    bytea       NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
