-- Several table-service instances share the tables: a table belongs to one of P partitions (a stable
-- hash of its id mod P, services/table/leases.py: partition_of), and each partition is leased to one
-- instance at a time. Every commit checks, in its own transaction, that its instance still holds the
-- partition with the epoch it believes (table_fence), so an instance that lost its lease (frozen,
-- partitioned away) cannot write after the next owner took over.

-- The partition count, fixed at the first start (TABLE_PARTITIONS): one row.
CREATE TABLE IF NOT EXISTS table_partitioning (
    one        boolean PRIMARY KEY DEFAULT true CHECK (one),
    partitions integer NOT NULL CHECK (partitions > 0)
);

CREATE TABLE IF NOT EXISTS partition_leases (
    partition  integer     PRIMARY KEY,
    owner      text,                                  -- an instance_id; NULL: free
    epoch      bigint      NOT NULL DEFAULT 0,        -- bumped on every change of owner
    expires_at timestamptz NOT NULL DEFAULT '-infinity'
);

-- The live instances: where clients reach each one, and when it last said it was alive.
CREATE TABLE IF NOT EXISTS table_instances (
    instance_id  text        PRIMARY KEY,
    address      text        NOT NULL,
    heartbeat_at timestamptz NOT NULL DEFAULT now(),
    started_at   timestamptz NOT NULL DEFAULT now()
);

ALTER TABLE tables ADD COLUMN IF NOT EXISTS partition integer;  -- NULL until the first start numbers it
CREATE INDEX IF NOT EXISTS tables_unfinished_partition ON tables (partition) WHERE NOT finished;

-- The fence: the calling instance holds the table's partition with this epoch and the lease is
-- unexpired; the lease row is taken FOR SHARE, so a takeover's UPDATE waits for the commit that holds
-- it and the next owner reads after that commit. Refused: SQLSTATE MNF01 (no commit of it is kept).
CREATE OR REPLACE FUNCTION table_fence(p_table text, p_owner text, p_epoch bigint) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
    lease record;
BEGIN
    SELECT l.owner, l.epoch, l.expires_at > now() AS live INTO lease
    FROM tables t JOIN partition_leases l ON l.partition = t.partition
    WHERE t.table_id = p_table
    FOR SHARE OF l;
    IF NOT FOUND OR lease.owner IS DISTINCT FROM p_owner OR lease.epoch <> p_epoch OR NOT lease.live THEN
        RAISE EXCEPTION 'table %: instance % no longer holds its partition at epoch % (owner %, epoch %, live %)',
            p_table, p_owner, p_epoch, lease.owner, lease.epoch, lease.live
            USING ERRCODE = 'MNF01';
    END IF;
    RETURN true;
END
$$;
