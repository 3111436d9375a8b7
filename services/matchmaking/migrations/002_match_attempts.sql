-- A table the matcher is about to ask the table service for, committed before the CreateTable call.
-- If the answer is lost (a deadline, the table service or this service dying) the tickets stay
-- waiting, and the next pass forms this same table again with the same request id, which gets the
-- table made the first time back: never a second table and an orphan. The row goes with the match's
-- record, or when the table service refuses the table outright (then it surely was not made).
CREATE TABLE match_attempts (
    request_id text        PRIMARY KEY,
    mode       text        NOT NULL,
    rated      boolean     NOT NULL,
    seats      jsonb       NOT NULL,  -- [{"seat", "ticket_id" (null: a bot), "name", "team"}] in seat order
    created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX match_attempts_mode ON match_attempts (mode, created_at);
