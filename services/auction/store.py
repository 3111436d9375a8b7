"""The auction service's SQL: every statement it runs, in one place."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import asyncpg

from engine import codec
from engine.state import AuctionState

OPEN, SETTLED, CANCELLED = "open", "settled", "cancelled"

#: An outbox row: (subject, Nats-Msg-Id, payload).
OutboxRow = tuple[str, str, bytes]


@dataclass(slots=True)
class AuctionRow:
    table_id: str
    auction_id: int
    status: str
    state: AuctionState
    limits: tuple[int, ...]
    bid_ms: int
    clock_scale: int
    deadline_unix_ms: int
    version: int
    moves: int
    events: int
    winner: int | None
    price: int | None
    closed_by: str | None
    started_seq: int
    paused_left_ms: int | None = None  # E5: the bidder's wall ms left while the game is paused
    limits_seq: int = 0  # A3: the table seq of the AuctionLimitsChanged that set `limits` (0: AuctionStarted's)
    pause_seq: int = 0  # E5: the table seq of the last GamePaused or GameResumed applied (0: none)


def _row(r: asyncpg.Record) -> AuctionRow:
    return AuctionRow(
        r["table_id"],
        r["auction_id"],
        r["status"],
        codec.from_data(AuctionState, json.loads(r["state"])),
        tuple(json.loads(r["limits"])),
        r["bid_ms"],
        r["clock_scale"],
        r["deadline_unix_ms"],
        r["version"],
        r["moves"],
        r["events"],
        r["winner"],
        r["price"],
        r["closed_by"],
        r["started_seq"],
        r["paused_left_ms"],
        r["limits_seq"],
        r["pause_seq"],
    )


def state_json(state: AuctionState) -> str:
    return str(codec.dumps(codec.to_data(state)))


async def _outbox(conn: asyncpg.Connection, rows: list[OutboxRow]) -> None:
    if rows:
        await conn.executemany("INSERT INTO outbox (subject, msg_id, payload) VALUES ($1, $2, $3)", rows)


async def open_auction(conn: asyncpg.Connection, row: AuctionRow, outbox: list[OutboxRow]) -> bool:
    """Insert an auction and its "opened" event in one transaction; False (and nothing written)
    when the auction was opened before (a redelivered AuctionStarted)."""
    async with conn.transaction():
        inserted = await conn.fetchval(
            "INSERT INTO auctions (table_id, auction_id, status, state, limits, bid_ms, clock_scale, "
            "deadline_unix_ms, version, moves, events, started_seq) "
            "VALUES ($1, $2, 'open', $3::jsonb, $4::jsonb, $5, $6, $7, 0, 0, $8, $9) "
            "ON CONFLICT (table_id, auction_id) DO NOTHING RETURNING true",
            row.table_id,
            row.auction_id,
            state_json(row.state),
            json.dumps(list(row.limits)),
            row.bid_ms,
            row.clock_scale,
            row.deadline_unix_ms,
            row.events,
            row.started_seq,
        )
        if not inserted:
            return False
        await _outbox(conn, outbox)
        return True


_SAVE = """
WITH up AS (
    UPDATE auctions SET status = $3, state = $4::jsonb, deadline_unix_ms = $5, version = $6, moves = $7,
        events = $8, winner = $9, price = $10, closed_by = $11, paused_left_ms = $13,
        limits = $20::jsonb, limits_seq = $21, pause_seq = $22, updated_at = now()
    WHERE table_id = $1 AND auction_id = $2 AND version = $12
    RETURNING 1
), move AS (
    INSERT INTO auction_moves (table_id, auction_id, n, seat, kind, amount)
    SELECT $1, $2, $7, $14, $15, $16 FROM up WHERE $14::int IS NOT NULL
), out AS (
    INSERT INTO outbox (subject, msg_id, payload)
    SELECT o.subject, o.msg_id, o.payload
    FROM up, unnest($17::text[], $18::text[], $19::bytea[]) WITH ORDINALITY AS o(subject, msg_id, payload, n)
    ORDER BY o.n
)
SELECT count(*) FROM up
"""


async def save(
    conn: asyncpg.Connection,
    row: AuctionRow,
    expected_version: int,
    move: tuple[int, str, int] | None,
    outbox: list[OutboxRow],
) -> bool:
    """Write the auction's new state if it is still at `expected_version`, with its move
    (seat, kind, amount) and outbox rows, in one statement (one round trip, atomic); False
    (nothing written) if another writer moved it on."""
    seat, kind, amount = move if move is not None else (None, None, None)
    updated = await conn.fetchval(
        _SAVE,
        row.table_id,
        row.auction_id,
        row.status,
        state_json(row.state),
        row.deadline_unix_ms,
        row.version,
        row.moves,
        row.events,
        row.winner,
        row.price,
        row.closed_by,
        expected_version,
        row.paused_left_ms,
        seat,
        kind,
        amount,
        [r[0] for r in outbox],
        [r[1] for r in outbox],
        [r[2] for r in outbox],
        json.dumps(list(row.limits)),
        row.limits_seq,
        row.pause_seq,
    )
    return bool(updated)


async def close_if_open(
    conn: asyncpg.Connection, table_id: str, auction_id: int | None, status: str, winner: int, price: int, by: str
) -> int:
    """Close the table's open auction (`auction_id` None: whichever is open) without a result of ours."""
    result = await conn.execute(
        "UPDATE auctions SET status = $3, winner = $4, price = $5, closed_by = $6, deadline_unix_ms = 0, "
        "version = version + 1, updated_at = now() "
        "WHERE table_id = $1 AND ($2::bigint IS NULL OR auction_id = $2) AND status = 'open'",
        table_id,
        auction_id,
        status,
        winner,
        price,
        by,
    )
    return int(result.split()[-1])


async def get(conn: asyncpg.Connection, table_id: str, auction_id: int) -> AuctionRow | None:
    r = await conn.fetchrow("SELECT * FROM auctions WHERE table_id = $1 AND auction_id = $2", table_id, auction_id)
    return _row(r) if r is not None else None


async def open_of_table(conn: asyncpg.Connection, table_id: str) -> AuctionRow | None:
    r = await conn.fetchrow(
        "SELECT * FROM auctions WHERE table_id = $1 AND status = 'open' ORDER BY auction_id DESC LIMIT 1", table_id
    )
    return _row(r) if r is not None else None


async def all_open(conn: asyncpg.Connection) -> list[AuctionRow]:
    return [_row(r) for r in await conn.fetch("SELECT * FROM auctions WHERE status = 'open' ORDER BY created_at")]


async def moves(conn: asyncpg.Connection, table_id: str, auction_id: int) -> list[dict[str, Any]]:
    rows = await conn.fetch(
        "SELECT n, seat, kind, amount FROM auction_moves WHERE table_id = $1 AND auction_id = $2 ORDER BY n",
        table_id,
        auction_id,
    )
    return [dict(r) for r in rows]
