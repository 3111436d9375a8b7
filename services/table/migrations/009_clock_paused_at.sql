-- The table's clock stands still while no table service runs it after a clean stop (a restart, a
-- rolling update): the stopping instance writes the wall ms it stopped at, and whoever loads the table
-- next adds the time since to clock_stopped_ms (migration 006) before arming its timers, so nobody is
-- timed out (E2) for the platform's downtime. NULL: running, or stopped by a crash (not recorded).
ALTER TABLE tables ADD COLUMN IF NOT EXISTS clock_paused_at_ms bigint;
