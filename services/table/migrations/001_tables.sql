-- The table service's state: tables, their events (the source of truth), seats,
-- answered commands (idempotency) and the outbox of events to publish.
CREATE TABLE tables (
    table_id       text        PRIMARY KEY,
    mode           text        NOT NULL,
    players        jsonb       NOT NULL,
    seed           numeric     NOT NULL,
    clock_epoch_ms bigint      NOT NULL,  -- wall time (unix ms) at game time 0
    clock_scale    integer     NOT NULL,  -- game seconds per real second (E6)
    seq            bigint      NOT NULL,  -- last event's seq
    finished       boolean     NOT NULL DEFAULT false,
    snapshot       jsonb,                 -- engine state at snapshot_seq
    snapshot_seq   bigint      NOT NULL DEFAULT 0,
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX tables_unfinished ON tables (table_id) WHERE NOT finished;

CREATE TABLE table_events (
    table_id     text        NOT NULL REFERENCES tables (table_id),
    seq          bigint      NOT NULL,
    type         text        NOT NULL,
    payload      jsonb       NOT NULL,
    game_ms      bigint      NOT NULL,
    committed_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (table_id, seq)
);

CREATE TABLE seats (
    table_id text    NOT NULL REFERENCES tables (table_id),
    seat     integer NOT NULL,
    token    text    NOT NULL UNIQUE,
    PRIMARY KEY (table_id, seat)
);

CREATE TABLE table_commands (
    table_id   text        NOT NULL REFERENCES tables (table_id),
    command_id text        NOT NULL,
    response   bytea       NOT NULL,  -- the SubmitCommandResponse first given
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (table_id, command_id)
);

CREATE TABLE IF NOT EXISTS outbox (
    id         bigserial   PRIMARY KEY,
    subject    text        NOT NULL,
    msg_id     text        NOT NULL,
    payload    bytea       NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
