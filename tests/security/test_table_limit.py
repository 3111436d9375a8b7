"""A table service holds at most TABLE_MAX_TABLES unfinished tables: CreateTable past it is
RESOURCE_EXHAUSTED with `retry-after-ms`, an evicted unfinished table still counts (it comes back at
its deadline and at every restart: `services.table.idle`), and a finished one frees its place.
The service runs in this process over a schema of its own, with a limit of 3."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest

from client import BotTable, connect
from client.platform import Platform
from engine import Surrender
from monopoly.v1 import table_pb2, table_pb2_grpc
from servicekit import db, grpcserver
from servicekit.wire import command_to_proto
from services.table.api import TableService, register
from services.table.tables import Tables

pytestmark = pytest.mark.integration

MIGRATIONS = Path(__file__).parents[2] / "services" / "table" / "migrations"
LIMIT = 3

Served = tuple[Tables, table_pb2_grpc.TableServiceStub]


@pytest.fixture
async def limited(platform: Platform, server_urls: tuple[str, str]) -> AsyncIterator[Served]:
    pool = await db.create_pool(server_urls[1], min_size=1, max_size=4, schema="table_limit")
    await db.migrate(pool, "table", MIGRATIONS)
    async with pool.acquire() as conn:  # a fresh start: no tables of an earlier run count
        await conn.execute("TRUNCATE tables CASCADE")
    tables = Tables(pool, token_secret=platform.token_secret, max_tables=LIMIT, idle_evict_s=0.3)
    server, port, _ = await grpcserver.start_server(
        "127.0.0.1", 0, register(TableService(tables)), ["monopoly.v1.TableService"]
    )
    channel, stub = connect(f"127.0.0.1:{port}")
    try:
        yield tables, stub
    finally:
        await channel.close()
        await server.stop(None)
        await tables.stop()
        await pool.close()
        grpcserver.QUOTAS = None


async def refused(stub: table_pb2_grpc.TableServiceStub) -> grpc.aio.AioRpcError:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await BotTable(stub, seed=1600, players=2).create()
    return caught.value


async def test_past_the_limit_create_table_is_resource_exhausted_until_a_table_finishes(limited: Served) -> None:
    tables, stub = limited
    full = [BotTable(stub, seed=1601 + i, players=2) for i in range(LIMIT)]
    for bot_table in full:
        await bot_table.create()

    exc = await refused(stub)
    assert exc.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, exc
    assert f"maximum of {LIMIT} live tables" in (exc.details() or "")
    assert int(dict(exc.trailing_metadata() or ()).get("retry-after-ms", "0")) > 0

    # Evicted while idle, an unfinished table still holds its place.
    first = full[0].table_id
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 30
    while first not in tables.idle.dormant:
        assert loop.time() < deadline, "the idle table was not evicted"
        await asyncio.sleep(0.05)
    assert (await refused(stub)).code() == grpc.StatusCode.RESOURCE_EXHAUSTED

    # A finished table frees it: the seat to act surrenders (R3), the other wins.
    seat = (await stub.GetTable(table_pb2.GetTableRequest(table_id=first), timeout=30)).actor
    answer = await stub.SubmitCommand(
        table_pb2.SubmitCommandRequest(
            table_id=first,
            command_id="surrender",
            seat_token=full[0].tokens[seat],
            command=command_to_proto(Surrender(seat)),
        ),
        timeout=30,
    )
    assert "GameEnded" in [e.type for e in answer.events], [e.type for e in answer.events]
    another = BotTable(stub, seed=1610, players=2)
    assert await another.create()
    assert (await refused(stub)).code() == grpc.StatusCode.RESOURCE_EXHAUSTED  # full again
