-- The tables matchmaking formed (its MatchEvent "formed"): who sits at each seat by player id, which
-- seats are bots and whether matchmaking formed the table rated. A table found here is judged by
-- player ids and these bot flags; any other table by display names and `ratings.is_bot`.
CREATE TABLE matches (
    table_id       text        PRIMARY KEY,
    mode           text        NOT NULL,
    kind           text        NOT NULL,    -- queue | custom
    rated          boolean     NOT NULL,    -- false when bots filled seats
    seats          jsonb       NOT NULL,    -- [{"seat", "player_id", "display_name", "is_bot"}] by seat
    formed_unix_ms bigint      NOT NULL,
    received_at    timestamptz NOT NULL DEFAULT now()
);
