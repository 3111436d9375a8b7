-- The trade service's state (schema "trade"): proposals, a counter row per table
-- (trade ids and T1's proposals per turn) and the outbox of TradeEvents to publish.
CREATE TABLE trades (
    table_id     text        NOT NULL,
    trade_id     bigint      NOT NULL,          -- 1, 2, 3... per table
    proposer     integer     NOT NULL,
    counterparty integer     NOT NULL,
    give_cash    bigint      NOT NULL,          -- from the proposer
    give_squares integer[]   NOT NULL,
    take_cash    bigint      NOT NULL,          -- from the counterparty
    take_squares integer[]   NOT NULL,
    status       text        NOT NULL DEFAULT 'open'
                 CHECK (status IN ('open', 'executed', 'declined', 'cancelled', 'expired', 'refused')),
    turn_no      bigint      NOT NULL,          -- the table's turn the proposal belongs to
    table_seq    bigint      NOT NULL,          -- the table's seq the terms were checked against
    reason       text        NOT NULL DEFAULT '',
    rule         text        NOT NULL DEFAULT '',
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (table_id, trade_id)
);
CREATE INDEX trades_open ON trades (table_id) WHERE status = 'open';

-- One row per table, locked by every proposal: the next trade id and T1's count of the turn.
CREATE TABLE trade_counters (
    table_id      text    PRIMARY KEY,
    next_trade_id bigint  NOT NULL DEFAULT 1,
    turn_no       bigint  NOT NULL DEFAULT 0,
    proposals     integer NOT NULL DEFAULT 0   -- proposals stored in turn_no
);

CREATE TABLE IF NOT EXISTS outbox (
    id         bigserial   PRIMARY KEY,
    subject    text        NOT NULL,
    msg_id     text        NOT NULL,
    payload    bytea       NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
