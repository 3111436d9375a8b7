"""A flooding seat is cut to its quota (RESOURCE_EXHAUSTED with `retry-after-ms`), and another
table's players play on, answered as usual. The table service runs here with small quotas, so the
probe does not depend on how fast this machine can flood."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator

import asyncpg
import grpc
import pytest

from client import BotTable, connect
from client.platform import Platform
from engine import EndTurn, Roll
from monopoly.v1 import table_pb2, table_pb2_grpc
from servicekit import grpcserver
from servicekit.quotas import QuotaSettings
from servicekit.wire import command_to_proto
from services.table.api import TableService, register
from services.table.tables import Tables

from ..integration.helpers import get

pytestmark = pytest.mark.integration

QUOTA = QuotaSettings(commands_per_s=5, commands_burst=10)
FLOOD = 60


@pytest.fixture
async def small_quotas(platform: Platform, pool: asyncpg.Pool) -> AsyncIterator[table_pb2_grpc.TableServiceStub]:
    """A table service in this process (the session's database) whose seats may send 5 commands/s."""
    tables = Tables(pool, token_secret=platform.token_secret)
    server, port, _ = await grpcserver.start_server(
        "127.0.0.1", 0, register(TableService(tables)), ["monopoly.v1.TableService"], quota_settings=QUOTA
    )
    channel, stub = connect(f"127.0.0.1:{port}")
    try:
        yield stub
    finally:
        await channel.close()
        await server.stop(None)
        await tables.stop()
        grpcserver.QUOTAS = None


async def test_a_seat_flooding_commands_is_refused_with_a_retry_hint_and_another_table_plays_on(
    small_quotas: table_pb2_grpc.TableServiceStub,
) -> None:
    stub = small_quotas
    abuser, other = BotTable(stub, seed=1401, players=2), BotTable(stub, seed=1402, players=2)
    await abuser.create()
    await other.create()
    view = await get(stub, abuser.table_id)
    idle = 1 - view.actor  # not this seat's turn: every command is refused and changes nothing

    def flooding(i: int) -> table_pb2.SubmitCommandRequest:
        return table_pb2.SubmitCommandRequest(
            table_id=abuser.table_id,
            command_id=f"flood-{i}",
            seat_token=abuser.tokens[idle],
            command=command_to_proto(EndTurn(idle)),
        )

    hints: list[int] = []

    async def one(i: int) -> str:
        try:
            await stub.SubmitCommand(flooding(i), timeout=30)
        except grpc.aio.AioRpcError as exc:
            if exc.code() == grpc.StatusCode.RESOURCE_EXHAUSTED:
                hints.append(int(dict(exc.trailing_metadata() or ()).get("retry-after-ms", "0")))
                assert "too many command calls" in (exc.details() or "")
            return exc.code().name
        return "OK"

    codes = Counter(await asyncio.gather(*(one(i) for i in range(FLOOD))))
    assert codes["OK"] == 0, codes  # not its turn: none applied
    assert codes["RESOURCE_EXHAUSTED"] >= FLOOD - QUOTA.commands_burst - 10, codes
    assert hints and all(h > 0 for h in hints)

    async def stream() -> AsyncIterator[table_pb2.SubmitCommandRequest]:
        for i in range(FLOOD):
            yield flooding(FLOOD + i)

    played: Counter[str] = Counter()
    async for answer in stub.Play(stream()):  # on a Play stream too, each refusal says when to come back
        played[answer.refused.code or "OK"] += 1
        if answer.refused.code == "RESOURCE_EXHAUSTED":
            assert answer.refused.retry_after_ms > 0
    assert played["OK"] == 0 and played["RESOURCE_EXHAUSTED"] > 0, played

    # Another table's seat has a quota of its own: answered at once.
    theirs = await get(stub, other.table_id)
    answer = await stub.SubmitCommand(
        table_pb2.SubmitCommandRequest(
            table_id=other.table_id,
            command_id="after-the-flood",
            seat_token=other.tokens[theirs.actor],
            command=command_to_proto(Roll(theirs.actor)),
        ),
        timeout=10,
    )
    assert "DiceRolled" in [e.type for e in answer.events]
