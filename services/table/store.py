"""The table service's SQL: every statement it runs, in one place."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import asyncpg

from engine import Event, TableState, codec
from servicekit import outbox


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
    )


async def create_table(
    conn: asyncpg.Connection, table_id: str, mode: str, players: list[str], seed: int, epoch_ms: int, scale: int
) -> None:
    await conn.execute(
        "INSERT INTO tables (table_id, mode, players, seed, clock_epoch_ms, clock_scale, seq) "
        "VALUES ($1, $2, $3, $4, $5, $6, 0)",
        table_id,
        mode,
        json.dumps(players),
        seed,
        epoch_ms,
        scale,
    )


async def append(
    conn: asyncpg.Connection,
    table_id: str,
    first_seq: int,
    events: list[Event],
    game_ms: int,
    state: TableState,
    snapshot: bool,
    outbox_rows: list[tuple[str, str, bytes]],
    command_id: str | None = None,
    response: bytes | None = None,
) -> None:
    """One command's events, the table's progress, the command's answer and the outbox rows,
    in the caller's transaction."""
    await conn.executemany(
        "INSERT INTO table_events (table_id, seq, type, payload, game_ms) VALUES ($1, $2, $3, $4, $5)",
        [
            (table_id, first_seq + i, type(e).__name__, codec.dumps(codec.event_to_data(e)), game_ms)
            for i, e in enumerate(events)
        ],
    )
    if snapshot:
        await conn.execute(
            "UPDATE tables SET seq = $2, finished = $3, snapshot = $4, snapshot_seq = $2, updated_at = now() "
            "WHERE table_id = $1",
            table_id,
            state.seq,
            state.finished,
            codec.dumps(codec.state_to_data(state)),
        )
    else:
        await conn.execute(
            "UPDATE tables SET seq = $2, finished = $3, updated_at = now() WHERE table_id = $1",
            table_id,
            state.seq,
            state.finished,
        )
    if command_id is not None and response is not None:
        await conn.execute(
            "INSERT INTO table_commands (table_id, command_id, response) VALUES ($1, $2, $3)",
            table_id,
            command_id,
            response,
        )
    if outbox_rows:
        await outbox.add(conn, outbox_rows)


async def answered(conn: asyncpg.Connection, table_id: str, command_id: str) -> bytes | None:
    r = await conn.fetchval(
        "SELECT response FROM table_commands WHERE table_id = $1 AND command_id = $2", table_id, command_id
    )
    return bytes(r) if r is not None else None


async def table(conn: asyncpg.Connection, table_id: str) -> TableRow | None:
    r = await conn.fetchrow("SELECT * FROM tables WHERE table_id = $1", table_id)
    return _row(r) if r is not None else None


async def unfinished(conn: asyncpg.Connection) -> list[TableRow]:
    return [_row(r) for r in await conn.fetch("SELECT * FROM tables WHERE NOT finished ORDER BY created_at")]


async def events_after(conn: asyncpg.Connection, table_id: str, seq: int) -> list[Event]:
    rows = await conn.fetch(
        "SELECT payload FROM table_events WHERE table_id = $1 AND seq > $2 ORDER BY seq", table_id, seq
    )
    return [codec.event_from_data(json.loads(r["payload"])) for r in rows]


async def event_rows_after(conn: asyncpg.Connection, table_id: str, seq: int) -> list[asyncpg.Record]:
    return await conn.fetch(
        "SELECT seq, payload, game_ms, committed_at FROM table_events WHERE table_id = $1 AND seq > $2 ORDER BY seq",
        table_id,
        seq,
    )


async def add_seat(conn: asyncpg.Connection, table_id: str, seat: int, token: str) -> str:
    """The seat's token: the existing one, or `token` if the seat had none."""
    existing = await conn.fetchval("SELECT token FROM seats WHERE table_id = $1 AND seat = $2", table_id, seat)
    if existing is not None:
        return str(existing)
    await conn.execute("INSERT INTO seats (table_id, seat, token) VALUES ($1, $2, $3)", table_id, seat, token)
    return token


async def seat_of(conn: asyncpg.Connection, table_id: str, token: str) -> int | None:
    r = await conn.fetchval("SELECT seat FROM seats WHERE table_id = $1 AND token = $2", table_id, token)
    return int(r) if r is not None else None
