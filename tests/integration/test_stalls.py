"""E2: the platform's stalls are not the players' time. A table service frozen (SIGSTOP, a paused VM) or a
commit that hangs in Postgres (a lock, a frozen server, a full disk) and then goes through: the time the
table could not run stands still on its clock, so nobody is timed out for it. Here each stall outlasts
the whole turn timer (75 game seconds, 7.5 s at clock scale 10)."""

from __future__ import annotations

import asyncio
import time
import uuid

import asyncpg
import pytest

from client.platform import Platform
from engine import Roll
from monopoly.v1 import table_pb2, table_pb2_grpc
from servicekit.wire import command_to_proto

from .helpers import assert_nobody_timed_out, clock_of, event_rows, join_seats, table_state

pytestmark = pytest.mark.integration

STALL_S = 9.0


async def new_table(stub: table_pb2_grpc.TableServiceStub, seed: int) -> str:
    reply = await stub.CreateTable(
        table_pb2.CreateTableRequest(mode="classic", players=["eve", "fay"], seed=seed, clock_scale=10), timeout=30
    )
    await table_state(stub, reply.table_id)  # loaded: its timers armed
    return reply.table_id


async def stopped_ms_at_least(pool: asyncpg.Pool, table_id: str, least: int, timeout: float = 3.0) -> int:
    """The table's saved `clock_stopped_ms` once it reaches `least` (or what it is after `timeout`)."""
    deadline = time.monotonic() + timeout
    while True:
        stopped, _ = await clock_of(pool, table_id)
        if stopped >= least or time.monotonic() > deadline:
            return stopped
        await asyncio.sleep(0.2)


async def test_E2_a_frozen_table_service_times_nobody_out(
    platform: Platform, stub: table_pb2_grpc.TableServiceStub, pool: asyncpg.Pool
) -> None:
    table_id = await new_table(stub, 71)
    seq_before = len(await event_rows(pool, table_id))
    await platform.table.freeze(STALL_S)
    assert await stopped_ms_at_least(pool, table_id, 8000) >= 8000  # the pause, less the watch's period
    await asyncio.sleep(1.0)  # a deadline counted through the freeze would have fired at once
    await assert_nobody_timed_out(pool, table_id, seq_before)


async def test_E2_a_commit_that_hangs_in_postgres_times_nobody_out(
    stub: table_pb2_grpc.TableServiceStub, pool: asyncpg.Pool
) -> None:
    table_id = await new_table(stub, 72)
    state = await table_state(stub, table_id)
    tokens = await join_seats(stub, table_id, 2)
    seat = state.current
    request = table_pb2.SubmitCommandRequest(
        table_id=table_id, command_id=uuid.uuid4().hex, seat_token=tokens[seat], command=command_to_proto(Roll(seat))
    )
    async with pool.acquire() as conn, conn.transaction():
        await conn.execute("SELECT 1 FROM tables WHERE table_id = $1 FOR UPDATE", table_id)  # the commit waits
        rolling = asyncio.create_task(stub.SubmitCommand(request, timeout=60))
        await asyncio.sleep(STALL_S)
        assert not rolling.done()
    reply = await rolling
    assert await stopped_ms_at_least(pool, table_id, 8000) >= 8000
    await asyncio.sleep(1.0)  # the turn's deadline, counted through the hang, would have fired at once
    await assert_nobody_timed_out(pool, table_id, reply.last_seq)
