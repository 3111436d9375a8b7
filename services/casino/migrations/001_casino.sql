-- The casino service's state: one jackpot pool per table (K4) with its generator,
-- the bets the tables opened, the ledger of settled bets, the table events already
-- handled (idempotency of the consumer) and the outbox of CasinoEvents to publish.
CREATE TABLE pools (
    table_id   text        PRIMARY KEY,
    pool       bigint      NOT NULL DEFAULT 0,  -- K4: starts at $0
    bets       bigint      NOT NULL DEFAULT 0,  -- bets settled into it
    seed       bigint      NOT NULL,            -- the generator's stream, drawn when the first bet opens
    counter    bigint      NOT NULL DEFAULT 0,  -- the next draw
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE bets (
    bet_id           text        PRIMARY KEY,   -- "<table_id>:<seq of CasinoOpened>"
    table_id         text        NOT NULL,
    opened_seq       bigint      NOT NULL,
    seat             integer     NOT NULL,
    status           text        NOT NULL CHECK (status IN ('open', 'settled', 'declined')),
    reason           text,                      -- declined: player | timeout | closed
    cash             bigint      NOT NULL,      -- the bettor's cash when the bet opened
    deadline_unix_ms bigint      NOT NULL,      -- the table's turn timer (E1) in wall time
    paused           boolean     NOT NULL DEFAULT false,  -- E5: the table is paused, the timer frozen
    created_at       timestamptz NOT NULL DEFAULT now(),
    closed_at        timestamptz
);
CREATE INDEX bets_open ON bets (table_id) WHERE status = 'open';
CREATE INDEX bets_table ON bets (table_id, opened_seq);

CREATE TABLE ledger (
    bet_id      text        PRIMARY KEY REFERENCES bets (bet_id),
    table_id    text        NOT NULL,
    seat        integer     NOT NULL,
    seed        bigint      NOT NULL,
    counter     bigint      NOT NULL,   -- draws (seed, counter) and (seed, counter + 1)
    numbers     integer[]   NOT NULL,
    die         integer     NOT NULL,
    jackpot_hit boolean     NOT NULL,
    stake       bigint      NOT NULL,   -- K1: paid to the bank
    payout      bigint      NOT NULL,   -- K2: stake included
    pool_before bigint      NOT NULL,
    pool_add    bigint      NOT NULL,   -- K4: bank money
    jackpot     bigint      NOT NULL,   -- K3: the pool paid out
    pool_after  bigint      NOT NULL,
    settled_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE handled_events (
    table_id   text        NOT NULL,
    seq        bigint      NOT NULL,
    handled_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (table_id, seq)
);

CREATE TABLE IF NOT EXISTS outbox (
    id         bigserial   PRIMARY KEY,
    subject    text        NOT NULL,
    msg_id     text        NOT NULL,
    payload    bytea       NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
