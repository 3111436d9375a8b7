-- The rating service's state: a small record per table built from its events, the verdict of
-- every finished game (exactly once: keyed by table id), each player's result in it, the
-- ratings per pool, XP, achievements and quests.
CREATE TABLE tables (
    table_id        text        PRIMARY KEY,
    mode            text,                   -- NULL until TableCreated is seen
    ruleset         text,
    teams           boolean,
    players         jsonb,                  -- display names by seat
    created_wall_ms bigint,                 -- wall time (unix ms) of the TableCreated envelope
    clock_scale     integer,
    rounds          integer     NOT NULL DEFAULT 0,   -- the last round begun (TurnStarted.round)
    jackpot_seats   integer[]   NOT NULL DEFAULT '{}',-- seats that hit the casino jackpot (K3)
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE rated_games (
    table_id      text        PRIMARY KEY,
    mode          text        NOT NULL,
    rated         boolean     NOT NULL,
    pool          text,                     -- rated games only
    reason        text        NOT NULL,     -- why unrated; '' when rated
    xp_halves     integer     NOT NULL,     -- 2 full XP, 1 half (R2), 0 none
    rewards       boolean     NOT NULL,     -- achievements and quests granted
    rounds        integer     NOT NULL,
    real_ms       bigint      NOT NULL,     -- wall time from TableCreated to GameEnded
    game_ms       bigint      NOT NULL,     -- E6: game time played, at clock_scale
    clock_scale   integer     NOT NULL,
    winner        integer     NOT NULL,
    ended_wall_ms bigint      NOT NULL,
    ended_seq     bigint      NOT NULL,
    judged_at     timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE results (
    table_id      text             NOT NULL REFERENCES rated_games (table_id),
    seat          integer          NOT NULL,
    player        text             NOT NULL,
    place         integer          NOT NULL,
    rated         boolean          NOT NULL,
    pool          text,
    mu_before     double precision,
    sigma_before  double precision,
    mu_after      double precision,
    sigma_after   double precision,
    ordinal_delta double precision NOT NULL DEFAULT 0,
    xp            integer          NOT NULL,
    achievements  text[]           NOT NULL DEFAULT '{}',
    ended_wall_ms bigint           NOT NULL,
    PRIMARY KEY (table_id, seat)
);
CREATE INDEX results_player ON results (player, ended_wall_ms DESC);

CREATE TABLE ratings (
    player     text             NOT NULL,
    pool       text             NOT NULL CHECK (pool IN ('ffa', 'team')),
    mu         double precision NOT NULL,
    sigma      double precision NOT NULL,
    ordinal    double precision NOT NULL,  -- mu - 3 sigma
    games      integer          NOT NULL,
    updated_at timestamptz      NOT NULL DEFAULT now(),
    PRIMARY KEY (player, pool)
);
CREATE INDEX ratings_leaderboard ON ratings (pool, ordinal DESC, player);

CREATE TABLE profiles (
    player      text        PRIMARY KEY,
    xp          bigint      NOT NULL DEFAULT 0,
    games       integer     NOT NULL DEFAULT 0,  -- finished games seen, rated or not
    rated_games integer     NOT NULL DEFAULT 0,
    updated_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE achievements (
    player      text        NOT NULL,
    achievement text        NOT NULL,
    table_id    text        NOT NULL,
    granted_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (player, achievement)
);

CREATE TABLE quests (
    player       text        NOT NULL,
    quest        text        NOT NULL,
    progress     integer     NOT NULL,
    target       integer     NOT NULL,
    completed_at timestamptz,
    PRIMARY KEY (player, quest)
);
