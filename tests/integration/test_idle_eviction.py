"""Idle table actors leave memory and come back on demand (`services.table.idle`): the same state,
events going on at the next seq, a command id answered as before; an evicted unfinished table's
turn timer (E1, E2) still fires. A table service in this process over a schema of its own, so its
tables stay out of the session's table service (which would recover them at its restart)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import asyncpg
import pytest
from prometheus_client import REGISTRY

from bots.heuristic import HeuristicBot
from client import BotTable, connect
from client.platform import Platform
from monopoly.v1 import table_pb2, table_pb2_grpc
from servicekit import db, grpcserver
from servicekit.errors import Elsewhere
from servicekit.wire import command_to_proto
from services.table.api import TableService, register
from services.table.tables import TableActor, Tables

from .helpers import event_rows, get

pytestmark = pytest.mark.integration

MIGRATIONS = Path(__file__).parents[2] / "services" / "table" / "migrations"
#: Generous on a loaded machine: eviction runs every quarter of the idle time, a reload takes ms.
WAIT_S = 30.0

Served = tuple[Tables, table_pb2_grpc.TableServiceStub]


@pytest.fixture(scope="module")
async def own_pool(server_urls: tuple[str, str]) -> AsyncIterator[asyncpg.Pool]:
    pool = await db.create_pool(server_urls[1], min_size=1, max_size=4, schema="idle_eviction")
    await db.migrate(pool, "table", MIGRATIONS)
    try:
        yield pool
    finally:
        await pool.close()


@pytest.fixture
async def served(platform: Platform, own_pool: asyncpg.Pool) -> AsyncIterator[Served]:
    """Tables evicted after 0.3 s idle, served on a port of their own."""
    tables = Tables(own_pool, token_secret=platform.token_secret, idle_evict_s=0.3, finished_evict_s=0.3)
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
        grpcserver.QUOTAS = None


def sample(name: str, labels: dict[str, str] | None = None) -> float:
    return REGISTRY.get_sample_value(name, labels or {}) or 0.0


async def until(what: Callable[[], Awaitable[bool]], timeout: float = WAIT_S) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not await what():
        assert loop.time() < deadline, "not within the time allowed"
        await asyncio.sleep(0.05)


async def evicted(tables: Tables, table_id: str) -> None:
    async def gone() -> bool:
        return table_id not in tables.actors

    await until(gone)


async def test_an_idle_table_is_evicted_and_read_back_with_the_same_state_and_the_next_seq(served: Served) -> None:
    tables, stub = served
    bot_table = BotTable(stub, seed=1501, players=3)  # clock scale 1: its turn timer is 75 s away (E1)
    table_id = await bot_table.create()
    bot = HeuristicBot(1501)

    sent: dict[str, table_pb2.SubmitCommandRequest] = {}

    async def move(command_id: str) -> table_pb2.SubmitCommandResponse:
        state = tables.actors[table_id].state if table_id in tables.actors else await tables.load_state(table_id)
        command = bot.choose(state, state.actor)
        sent[command_id] = table_pb2.SubmitCommandRequest(
            table_id=table_id,
            command_id=command_id,
            seat_token=bot_table.tokens[command.seat],
            command=command_to_proto(command),
        )
        return await stub.SubmitCommand(sent[command_id], timeout=30)

    answers = [await move(f"before-{i}") for i in range(6)]
    before = await get(stub, table_id)
    evictions = sample("table_evictions_total", {"status": "unfinished"})
    loaded = sample("table_actors_loaded")

    await evicted(tables, table_id)
    assert table_id in tables.idle.dormant  # unfinished: it still counts toward TABLE_MAX_TABLES
    assert sample("table_evictions_total", {"status": "unfinished"}) >= evictions + 1
    assert sample("table_actors_loaded") <= loaded - 1

    after = await get(stub, table_id)  # read back from Postgres
    assert table_id in tables.actors and table_id not in tables.idle.dormant
    assert after.seq == before.seq and after.actor == before.actor and after.phase == before.phase
    assert json.loads(after.state_json) == json.loads(before.state_json)

    # A command id answered before the eviction gets its first answer again (from Postgres), not applied
    # again (the table's clock may move on: time passed, E6).
    await evicted(tables, table_id)
    again = await stub.SubmitCommand(sent["before-5"], timeout=30)
    assert again == answers[-1]
    since = {r["type"] for r in await event_rows(tables.pool, table_id, before.seq)}
    assert since <= {"ClockAdvanced"}, since
    before = await get(stub, table_id)

    await evicted(tables, table_id)
    answer = await move("after-0")  # a command to an evicted table: read back, applied at the next seq
    assert answer.first_seq == before.seq + 1
    rows = await event_rows(tables.pool, table_id)
    assert [r["seq"] for r in rows] == list(range(1, answer.last_seq + 1))


async def test_an_evicted_unfinished_tables_turn_timer_still_fires(served: Served) -> None:
    tables, stub = served
    # Clock scale 25: the 75 s turn timer (E1) runs out 3 s after each turn starts, nobody plays.
    table_id = await BotTable(stub, seed=1502, players=2, clock_scale=25).create()
    wakeups = sample("table_wakeups_total")
    await evicted(tables, table_id)
    seq = (await tables.load_state(table_id)).seq  # Postgres's seq while it is out of memory

    async def timed_out() -> bool:
        rows = await event_rows(tables.pool, table_id, seq)
        return "TurnTimedOut" in [r["type"] for r in rows]

    await until(timed_out)  # E2: the game acted for the idle player, with no caller to wake the table
    assert sample("table_wakeups_total") >= wakeups + 1
    await evicted(tables, table_id)  # and, idle again, it leaves memory again
    rows = await event_rows(tables.pool, table_id)
    assert [r["seq"] for r in rows] == list(range(1, len(rows) + 1))


async def test_a_caller_waiting_on_a_load_is_never_given_an_actor_evicted_or_moved_meanwhile(
    served: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Between a table's load and its waiting caller's turn the sweep may evict the actor, or the
    partition move on: a watcher given that actor would wait for ever on events nobody sends it."""
    tables, stub = served
    table_id = await BotTable(stub, seed=1503, players=2).create()
    await evicted(tables, table_id)
    load = Tables._load
    fate = ["evicted"]

    async def load_then(self: Tables, tid: str) -> TableActor:
        actor = await load(self, tid)
        if fate:
            what = fate.pop()
            if what == "evicted":
                self.idle._evict(actor)
            else:
                self._moved(actor)
        return actor

    monkeypatch.setattr(Tables, "_load", load_then)
    actor = await tables.get(table_id)  # the first load's actor was evicted: a second load gives a live one
    assert not actor.evicted and not actor.moved and tables.actors[table_id] is actor

    await evicted(tables, table_id)
    fate.append("moved")
    with pytest.raises(Elsewhere):
        await tables.get(table_id)
    assert table_id not in tables.actors
