-- The table's clock stands still while the table cannot be saved (Postgres away): the wall
-- milliseconds it stood still so far, so game time = (wall - clock_epoch_ms - clock_stopped_ms) *
-- clock_scale (services/table/tables.py: TableActor.game_now). A player is never timed out (E2) for
-- an outage of the platform's database; whoever runs the table next reads the same clock.
ALTER TABLE tables ADD COLUMN IF NOT EXISTS clock_stopped_ms bigint NOT NULL DEFAULT 0;
