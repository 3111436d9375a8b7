"""The table service's SQL: every statement it runs, in one place."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import asyncpg

from engine import Event, TableState, codec


@dataclass(frozen=True, slots=True)
class TableRow:
    table_id: str
    mode: str
    clock_epoch_ms: int
    clock_scale: int
    seq: int
    finished: bool
    snapshot: dict[str, Any] | None
    snapshot_seq: int
    #: Wall ms the table's clock stood still while the table could not be saved (migration 006).
    clock_stopped_ms: int = 0
    #: Wall ms a table service stopped running the table at, cleanly (migration 009; None: running).
    clock_paused_at_ms: int | None = None


def _row(r: asyncpg.Record) -> TableRow:
    snapshot = json.loads(r["snapshot"]) if r["snapshot"] is not None else None
    return TableRow(
        r["table_id"],
        r["mode"],
        r["clock_epoch_ms"],
        r["clock_scale"],
        r["seq"],
        r["finished"],
        snapshot,
        r["snapshot_seq"],
        r["clock_stopped_ms"],
        r["clock_paused_at_ms"],
    )


async def create_table(
    conn: asyncpg.Connection,
    table_id: str,
    mode: str,
    players: list[str],
    seed: int,
    epoch_ms: int,
    scale: int,
    partition: int | None = None,
    request_id: str | None = None,
    request_digest: str | None = None,
) -> None:
    """The table's row; its first events follow in the same transaction (`append_many`, whose fence
    then checks this instance holds `partition`). A `request_id` used before raises
    `UniqueViolationError` (migration 007)."""
    await conn.execute(
        "INSERT INTO tables (table_id, mode, players, seed, clock_epoch_ms, clock_scale, seq, partition, request_id, "
        "request_digest) VALUES ($1, $2, $3, $4, $5, $6, 0, $7, $8, $9)",
        table_id,
        mode,
        json.dumps(players),
        seed,
        epoch_ms,
        scale,
        partition,
        request_id,
        request_digest,
    )


async def made_for(conn: asyncpg.Connection | asyncpg.Pool, request_id: str) -> asyncpg.Record | None:
    """The table a CreateTable with `request_id` made: its id, mode, players, seq, clock epoch and the
    digest of the request that made it (NULL: made before migration 008)."""
    return await conn.fetchrow(
        "SELECT table_id, mode, players, seq, clock_epoch_ms, request_digest FROM tables WHERE request_id = $1",
        request_id,
    )


#: One command's commit: each event's `Envelope` as serialized once for the outbox (`$4`, the bytes
#: JetStream gets, into `table_events.envelope`, migration 005; the JSON `payload` is no longer written).
#: With a fence (`$15` the instance, `$16` its lease epoch: `leases.Leases`), the same statement checks
#: the instance still holds the table's partition (`table_fence`, migration 004), or raises SQLSTATE
#: MNF01 and keeps nothing; without one (None: a `Tables` used on its own) it does not.
_APPEND = """
WITH events AS (
    INSERT INTO table_events (table_id, seq, type, envelope, game_ms)
    SELECT $1, seq, type, envelope, $5 FROM unnest($2::bigint[], $3::text[], $4::bytea[]) AS e(seq, type, envelope)
), answer AS (
    INSERT INTO table_commands (table_id, command_id, response, digest)
    SELECT $1, $8, $9, $14 WHERE $8::text IS NOT NULL
), out AS (
    INSERT INTO outbox (subject, msg_id, payload)
    SELECT subject, msg_id, payload FROM unnest($10::text[], $11::text[], $12::bytea[]) WITH ORDINALITY
        AS o(subject, msg_id, payload, n) ORDER BY n
)
UPDATE tables SET seq = $6, finished = $7, updated_at = now(),
    snapshot = COALESCE($13::jsonb, snapshot), snapshot_seq = CASE WHEN $13::jsonb IS NULL THEN snapshot_seq ELSE $6 END
WHERE table_id = $1 AND CASE WHEN $15::text IS NULL THEN true ELSE table_fence($1, $15, $16) END
"""


class AppendArgs(NamedTuple):
    """The parameters of `_APPEND`, in order: one command's commit."""

    table_id: str
    seqs: list[int]
    types: list[str]
    #: Each event's serialized `Envelope`: the bytes its outbox batch is made of.
    envelopes: list[bytes]
    game_ms: int
    seq: int
    finished: bool
    command_id: str | None
    response: bytes | None
    subjects: list[str]
    msg_ids: list[str]
    outbox_payloads: list[bytes]
    snapshot: str | None
    #: The digest the command id is bound to (`tables.command_digest`).
    digest: str | None = None
    #: The fence: this instance's id and the epoch of its lease on the table's partition (None: none).
    fence_owner: str | None = None
    fence_epoch: int | None = None


def append_args(
    table_id: str,
    first_seq: int,
    events: list[Event],
    envelopes: list[bytes],
    game_ms: int,
    state: TableState,
    snapshot: bool,
    outbox_rows: Sequence[tuple[str, str, bytes]],
    command_id: str | None = None,
    response: bytes | None = None,
    digest: str | None = None,
    fence: tuple[str, int] | None = None,
) -> AppendArgs:
    """One command's events (with their envelopes, serialized once: `envelopes`, the bytes the outbox
    rows are built from), the table's progress, the command's answer and its outbox rows (in publishing
    order), as the parameters of one statement."""
    return AppendArgs(
        table_id,
        list(range(first_seq, first_seq + len(events))),
        [type(e).__name__ for e in events],
        envelopes,
        game_ms,
        state.seq,
        state.finished,
        command_id,
        response,
        [row[0] for row in outbox_rows],
        [row[1] for row in outbox_rows],
        [row[2] for row in outbox_rows],
        codec.dumps(codec.state_to_data(state)) if snapshot else None,
        digest,
        fence[0] if fence is not None else None,
        fence[1] if fence is not None else None,
    )


async def append_many(conn: asyncpg.Connection, commits: Sequence[AppendArgs]) -> None:
    """Commits of several tables at once, atomically: one statement each, pipelined by `executemany`
    (one round trip, one transaction); a command id answered before raises `UniqueViolationError`
    and nothing of the group is kept."""
    if len(commits) == 1:
        await conn.execute(_APPEND, *commits[0])
    else:
        await conn.executemany(_APPEND, commits)


async def answered(conn: asyncpg.Connection, table_id: str, command_id: str) -> tuple[bytes, str | None] | None:
    """The first answer to `command_id` and the digest of the command it was (None: rows from before digests)."""
    r = await conn.fetchrow(
        "SELECT response, digest FROM table_commands WHERE table_id = $1 AND command_id = $2", table_id, command_id
    )
    return (bytes(r["response"]), r["digest"]) if r is not None else None


async def table(conn: asyncpg.Connection, table_id: str) -> TableRow | None:
    r = await conn.fetchrow("SELECT * FROM tables WHERE table_id = $1", table_id)
    return _row(r) if r is not None else None


async def seq_of(conn: asyncpg.Connection, table_id: str) -> int | None:
    """The table's last committed seq (None: no such table), without its snapshot."""
    seq: int | None = await conn.fetchval("SELECT seq FROM tables WHERE table_id = $1", table_id)
    return seq


async def stop_clock(conn: asyncpg.Connection, table_id: str, stopped_ms: int, fence: tuple[str, int] | None) -> bool:
    """Record how long the table's clock has stood still; False if this instance's lease on the table's
    partition moved on meanwhile (another owner took it: nothing written). The lease may have run out
    with the outage: it still counts while nobody else took it (the next heartbeat renews it)."""
    owner, epoch = fence if fence is not None else (None, None)
    return table_id in await save_clocks(conn, [(table_id, stopped_ms, epoch)], owner)


async def save_clocks(
    conn: asyncpg.Connection, clocks: Sequence[tuple[str, int, int | None]], owner: str | None
) -> set[str]:
    """Many tables' `clock_stopped_ms` in one statement: (table_id, stopped_ms, the lease epoch the table was
    loaded at); with `owner`, only where it still holds the table's partition at that epoch. A clock saved
    is running again: no longer paused by a stop (`clock_paused_at_ms`). The ids written."""
    ids = [c[0] for c in clocks]
    stopped = [c[1] for c in clocks]
    if owner is None:
        rows = await conn.fetch(
            "UPDATE tables t SET clock_stopped_ms = v.ms, clock_paused_at_ms = NULL "
            "FROM unnest($1::text[], $2::bigint[]) AS v(id, ms) WHERE t.table_id = v.id RETURNING t.table_id",
            ids,
            stopped,
        )
    else:
        rows = await conn.fetch(
            "UPDATE tables t SET clock_stopped_ms = v.ms, clock_paused_at_ms = NULL "
            "FROM unnest($1::text[], $2::bigint[], $3::bigint[]) AS v(id, ms, epoch), partition_leases l "
            "WHERE t.table_id = v.id AND l.partition = t.partition AND l.owner = $4 AND l.epoch = v.epoch "
            "RETURNING t.table_id",
            ids,
            stopped,
            [c[2] for c in clocks],
            owner,
        )
    return {r["table_id"] for r in rows}


async def pause_clocks(conn: asyncpg.Connection, now_ms: int, owner: str | None = None) -> int:
    """At a clean stop: the unfinished tables (with `owner`, those of the partitions it still holds)
    stop their clocks at `now_ms` until loaded again (`clock_paused_at_ms`); how many."""
    if owner is None:
        result = await conn.execute(
            "UPDATE tables SET clock_paused_at_ms = $1 WHERE NOT finished AND clock_paused_at_ms IS NULL", now_ms
        )
    else:
        result = await conn.execute(
            "UPDATE tables SET clock_paused_at_ms = $1 WHERE NOT finished AND clock_paused_at_ms IS NULL "
            "AND partition IN (SELECT partition FROM partition_leases WHERE owner = $2 AND expires_at > now())",
            now_ms,
            owner,
        )
    return int(result.split()[-1])


async def pause_abandoned(conn: asyncpg.Connection, abandoned: list[tuple[int, int]]) -> None:
    """E2 after a crash, in the heartbeat that takes the partitions: (partition, its last owner's last
    renewal in unix ms) for partitions taken from an owner that never handed them back (killed, frozen,
    cut off). Nobody ran their tables since that renewal, or since a table's last commit if that came
    later: their clocks stand still from then until they are loaded (`Tables._load` takes the time off,
    as after a clean stop's `pause_clocks`). A player gains at most the time between two renewals (a
    third of the TTL) and loses none. A table paused by a clean stop keeps that earlier moment."""
    await conn.execute(
        "UPDATE tables t "
        "SET clock_paused_at_ms = greatest(a.renewed_ms, (extract(epoch FROM t.updated_at) * 1000)::bigint) "
        "FROM unnest($1::int[], $2::bigint[]) AS a(p, renewed_ms) "
        "WHERE t.partition = a.p AND NOT t.finished AND t.clock_paused_at_ms IS NULL",
        [p for p, _ in abandoned],
        [ms for _, ms in abandoned],
    )


async def unfinished(conn: asyncpg.Connection, partitions: Sequence[int] | None = None) -> list[TableRow]:
    """The unfinished tables (of `partitions` only, when given)."""
    if partitions is None:
        rows = await conn.fetch("SELECT * FROM tables WHERE NOT finished ORDER BY created_at")
    else:
        rows = await conn.fetch(
            "SELECT * FROM tables WHERE NOT finished AND partition = ANY($1::int[]) ORDER BY created_at",
            list(partitions),
        )
    return [_row(r) for r in rows]


async def event_rows_after(conn: asyncpg.Connection, table_id: str, seq: int) -> list[asyncpg.Record]:
    """The table's events after `seq`: each row's `envelope` bytes (NULL before migration 005: then its
    JSON `payload`; `servicekit.wire.stored_event` reads either), game time and commit time."""
    rows: list[asyncpg.Record] = await conn.fetch(
        "SELECT seq, envelope, payload, game_ms, committed_at FROM table_events"
        " WHERE table_id = $1 AND seq > $2 ORDER BY seq",
        table_id,
        seq,
    )
    return rows
