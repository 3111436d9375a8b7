-- The matchmaking service's state (schema "matchmaking"): players, queue tickets, the matches it
-- formed and their seats, custom-table lobbies, and the outbox of match events to publish.
CREATE TABLE players (
    player_id    text             PRIMARY KEY,
    display_name text             NOT NULL,
    is_bot       boolean          NOT NULL DEFAULT false,
    -- The matcher's view of a rating until the rating service owns it (queues.RatingSource).
    rating       double precision NOT NULL DEFAULT 0,
    rating_sigma double precision NOT NULL DEFAULT 0,
    created_at   timestamptz      NOT NULL DEFAULT now()
);

-- One row per Enqueue; a player has at most one waiting ticket (the partial unique index).
CREATE TABLE tickets (
    ticket_id   text        PRIMARY KEY,
    player_id   text        NOT NULL REFERENCES players (player_id),
    mode        text        NOT NULL,
    party_id    text,
    party_size  integer     NOT NULL DEFAULT 1,
    bot_fill    boolean     NOT NULL DEFAULT false,
    status      text        NOT NULL DEFAULT 'waiting',  -- waiting | matched | cancelled
    enqueued_at timestamptz NOT NULL DEFAULT now(),
    closed_at   timestamptz,
    table_id    text,
    seat        integer
);
CREATE UNIQUE INDEX tickets_one_waiting ON tickets (player_id) WHERE status = 'waiting';
CREATE INDEX tickets_waiting ON tickets (mode, enqueued_at) WHERE status = 'waiting';
CREATE INDEX tickets_player ON tickets (player_id, enqueued_at);

-- A table formed here; live until the table's GameEnded.
CREATE TABLE matches (
    table_id    text        PRIMARY KEY,
    mode        text        NOT NULL,
    kind        text        NOT NULL,  -- queue | custom
    rated       boolean     NOT NULL,
    status      text        NOT NULL DEFAULT 'live',  -- live | finished
    rule_card   text        NOT NULL DEFAULT '',
    lobby_id    text,
    formed_at   timestamptz NOT NULL DEFAULT now(),
    finished_at timestamptz,
    winner      integer
);
CREATE INDEX matches_live ON matches (formed_at) WHERE status = 'live';

CREATE TABLE match_seats (
    table_id     text    NOT NULL REFERENCES matches (table_id),
    seat         integer NOT NULL,
    player_id    text    REFERENCES players (player_id),  -- NULL: a bot filling the table
    display_name text    NOT NULL,
    is_bot       boolean NOT NULL,
    team         integer NOT NULL DEFAULT -1,
    PRIMARY KEY (table_id, seat)
);
CREATE INDEX match_seats_player ON match_seats (player_id);

CREATE TABLE lobbies (
    lobby_id       text        PRIMARY KEY,
    host_player_id text        NOT NULL REFERENCES players (player_id),
    settings       jsonb       NOT NULL,
    seats          integer     NOT NULL,
    rule_card      text        NOT NULL,
    status         text        NOT NULL DEFAULT 'open',  -- open | started | closed
    table_id       text,
    created_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX lobbies_open ON lobbies (created_at) WHERE status = 'open';

CREATE TABLE lobby_members (
    lobby_id  text        NOT NULL REFERENCES lobbies (lobby_id),
    player_id text        NOT NULL REFERENCES players (player_id),
    joined_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (lobby_id, player_id)
);
CREATE INDEX lobby_members_player ON lobby_members (player_id);

CREATE TABLE outbox (
    id         bigserial   PRIMARY KEY,
    subject    text        NOT NULL,
    msg_id     text        NOT NULL,
    payload    bytea       NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
