-- A command id is bound to what it was first used for: the seat (or the platform) and the command's
-- content, as a SHA-256 digest (services/table/tables.py: command_digest). A retry with the same id and
-- the same command gets the first answer; the same id with another command, or from another seat, is
-- refused (ALREADY_EXISTS). Rows answered before this migration have no digest and keep their answer.
ALTER TABLE table_commands ADD COLUMN IF NOT EXISTS digest text;
