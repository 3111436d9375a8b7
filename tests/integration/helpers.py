"""Shared helpers of the table service's integration tests."""

from __future__ import annotations

import asyncio
import contextlib
import json
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import asyncpg
import grpc

from client import bot_service_token
from engine import Event, TableState, codec
from monopoly.v1 import common_pb2, rating_pb2, rating_pb2_grpc, table_pb2, table_pb2_grpc
from servicekit import db, idempotency
from servicekit.wire import event_from_proto, stored_event

TIMEOUT = 120.0


@contextlib.asynccontextmanager
async def own_schema(url: str, service: str, migrations: Path, kit: bool = False) -> AsyncIterator[asyncpg.Pool]:
    """A pool on a schema of its own (a new name each time) with `service`'s migrations applied (after the
    kit's, `processed_messages`, with `kit`), so a test's rows are seen by no running service; the schema
    is dropped afterwards."""
    schema = f"{service}_{uuid.uuid4().hex[:8]}"
    pool = await db.create_pool(url, max_size=4, schema=schema)
    if kit:
        await db.migrate(pool, "servicekit", idempotency.MIGRATIONS)
    await db.migrate(pool, service, migrations)
    try:
        yield pool
    finally:
        async with pool.acquire() as conn:
            await conn.execute(f"DROP SCHEMA {schema} CASCADE")
        await pool.close()


async def get(stub: table_pb2_grpc.TableServiceStub, table_id: str) -> table_pb2.TableView:
    return await stub.GetTable(table_pb2.GetTableRequest(table_id=table_id), timeout=30)


async def table_state(stub: table_pb2_grpc.TableServiceStub, table_id: str) -> TableState:
    """The table's engine state, as GetTable shows it."""
    return codec.state_from_data(json.loads((await get(stub, table_id)).state_json))


async def join_seats(stub: table_pb2_grpc.TableServiceStub, table_id: str, seats: int) -> dict[int, str]:
    """Every seat's token, joined with the platform's service token (what a bot driver does)."""
    tokens: dict[int, str] = {}
    for seat in range(seats):
        joined = await stub.JoinTable(
            table_pb2.JoinTableRequest(table_id=table_id, seat=seat, service_token=bot_service_token())
        )
        tokens[seat] = joined.seat_token
    return tokens


async def event_rows(pool: asyncpg.Pool, table_id: str, after: int = 0) -> list[asyncpg.Record]:
    async with pool.acquire() as conn:
        return await conn.fetch(
            "SELECT seq, type, envelope, payload, game_ms FROM table_events WHERE table_id = $1 AND seq > $2"
            " ORDER BY seq",
            table_id,
            after,
        )


async def assert_nobody_timed_out(pool: asyncpg.Pool, table_id: str, after: int) -> None:
    """E2: no turn of the table timed out after seq `after` (the platform's downtime is not the players')."""
    types = [r["type"] for r in await event_rows(pool, table_id, after)]
    assert "TurnTimedOut" not in types, types


async def clock_of(pool: asyncpg.Pool, table_id: str) -> tuple[int, int | None]:
    """The table's saved clock: how long it stood still (ms), and since when it is paused (None: running)."""
    async with pool.acquire() as conn:
        row = await conn.fetchrow(
            "SELECT clock_stopped_ms, clock_paused_at_ms FROM tables WHERE table_id = $1", table_id
        )
    assert row is not None
    return row["clock_stopped_ms"], row["clock_paused_at_ms"]


async def watch(
    stub: table_pb2_grpc.TableServiceStub,
    table_id: str,
    from_seq: int = 0,
    timeout: float = TIMEOUT,
    first: asyncio.Event | None = None,
) -> list[table_pb2.WatchTableResponse]:
    """Every item of a WatchTable stream until the server ends it (the game is over);
    `first` is set when the first item arrived."""
    items: list[table_pb2.WatchTableResponse] = []

    async def run() -> None:
        async for item in stub.WatchTable(
            table_pb2.WatchTableRequest(table_id=table_id, from_seq=from_seq, seat_token=bot_service_token())
        ):
            items.append(item)
            if first is not None:
                first.set()

    await asyncio.wait_for(run(), timeout)
    return items


async def watch_snapshot(stub: table_pb2_grpc.TableServiceStub, table_id: str, token: str) -> table_pb2.TableView:
    """The snapshot a WatchTable stream opened with `token` starts with (the stream is then closed)."""
    call = stub.WatchTable(table_pb2.WatchTableRequest(table_id=table_id, seat_token=token))
    try:
        async for item in call:
            assert item.HasField("snapshot")
            return item.snapshot
    finally:
        call.cancel()
    raise AssertionError("the stream ended before its snapshot")


def envelopes_of(items: list[table_pb2.WatchTableResponse]) -> list[common_pb2.Envelope]:
    """The events of WatchTable items (single events or batches), in stream order; no snapshot among them."""
    out: list[common_pb2.Envelope] = []
    for i, item in enumerate(items):
        kind = item.WhichOneof("item")
        if kind == "event":
            out.append(item.event)
        elif kind == "batch":
            assert item.batch.events, f"item {i}: an empty batch"
            out.extend(item.batch.events)
        else:
            raise AssertionError(f"item {i} of {len(items)} is a {kind}, not an event or a batch")
    return out


def event_data(env: common_pb2.Envelope) -> Any:
    return codec.event_to_data(event_from_proto(env.payload))


def row_event(row: asyncpg.Record) -> Event:
    """A `table_events` row's event (its envelope's; a row from before migration 005: its JSON)."""
    return stored_event(row["envelope"], row["payload"])


def row_data(row: asyncpg.Record) -> Any:
    return codec.event_to_data(row_event(row))


def assert_matches_rows(envelopes: list[common_pb2.Envelope], rows: list[asyncpg.Record], table_id: str) -> None:
    """The envelopes a client was streamed are exactly the committed rows as a client may see them (G10:
    `codec.public_event_data`, a shuffled pile in id order): same seqs, types, payloads and game times."""
    assert [e.seq for e in envelopes] == [r["seq"] for r in rows]
    for env, row in zip(envelopes, rows, strict=True):
        assert env.table_id == table_id
        assert env.event_id == f"{table_id}:{env.seq}"
        assert env.type == row["type"], env.seq
        assert env.occurred_at.game_ms == row["game_ms"], env.seq
        assert event_data(env) == codec.public_event_data(row_event(row)), env.seq


async def judged(
    rating: rating_pb2_grpc.RatingServiceStub, table_id: str, timeout: float = 60.0
) -> rating_pb2.GameResult:
    """The rating service's verdict on a table's game, once it has judged it (NOT_FOUND until then;
    UNAVAILABLE while the service restarts)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        try:
            return await rating.GetGame(rating_pb2.GetGameRequest(table_id=table_id), timeout=10)
        except grpc.aio.AioRpcError as exc:
            if exc.code() not in (grpc.StatusCode.NOT_FOUND, grpc.StatusCode.UNAVAILABLE):
                raise
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"game {table_id} not judged within {timeout:.0f} s")
        await asyncio.sleep(0.1)


def rule_id(exc: grpc.aio.AioRpcError) -> str | None:
    for key, value in exc.trailing_metadata() or ():
        if key == "rule-id":
            return str(value)
    return None
