"""A flooding seat is cut to its quota (RESOURCE_EXHAUSTED with `retry-after-ms`), and another
table's players play on, answered as usual."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator

import grpc
import pytest

from client import BotTable
from engine import EndTurn, Roll
from monopoly.v1 import table_pb2, table_pb2_grpc
from servicekit.quotas import QuotaSettings
from servicekit.wire import command_to_proto

from ..integration.helpers import get

pytestmark = pytest.mark.integration

FLOOD = int(QuotaSettings().commands_burst * 2)


async def test_a_seat_flooding_commands_is_refused_with_a_retry_hint_and_another_table_plays_on(
    stub: table_pb2_grpc.TableServiceStub,
) -> None:
    abuser, other = BotTable(stub, seed=1401, players=2), BotTable(stub, seed=1402, players=2)
    await abuser.create()
    await other.create()
    view = await get(stub, abuser.table_id)
    idle = 1 - view.actor  # not this seat's turn: every command is refused and changes nothing

    async def flood() -> AsyncIterator[table_pb2.SubmitCommandRequest]:
        for i in range(FLOOD):
            yield table_pb2.SubmitCommandRequest(
                table_id=abuser.table_id,
                command_id=f"flood-{i}",
                seat_token=abuser.tokens[idle],
                command=command_to_proto(EndTurn(idle)),
            )

    # Many at once (their arrival, not the table's pace, spends the quota: true on a loaded machine too).
    async def one(i: int) -> str:
        try:
            await stub.SubmitCommand(
                table_pb2.SubmitCommandRequest(
                    table_id=abuser.table_id,
                    command_id=f"flood-{i}",
                    seat_token=abuser.tokens[idle],
                    command=command_to_proto(EndTurn(idle)),
                ),
                timeout=60,
            )
        except grpc.aio.AioRpcError as exc:
            if exc.code() == grpc.StatusCode.RESOURCE_EXHAUSTED:
                hints.append(int(dict(exc.trailing_metadata() or ()).get("retry-after-ms", "0")))
            return exc.code().name
        return "OK"

    hints: list[int] = []
    codes = Counter(await asyncio.gather(*(one(i) for i in range(FLOOD))))
    assert codes["RESOURCE_EXHAUSTED"] > 0 and codes["OK"] == 0, codes  # not its turn: none applied
    assert hints and all(h > 0 for h in hints)
    # On a Play stream too: a refusal says when to come back.
    played: Counter[str] = Counter()
    async for answer in stub.Play(flood()):
        played[answer.refused.code or "OK"] += 1
        if answer.refused.code == "RESOURCE_EXHAUSTED":
            assert answer.refused.retry_after_ms > 0
    assert played["OK"] == 0 and sum(played.values()) == FLOOD, played

    # Meanwhile and after, another table's seat is answered at once.
    theirs = await get(stub, other.table_id)
    answer = await asyncio.wait_for(
        stub.SubmitCommand(
            table_pb2.SubmitCommandRequest(
                table_id=other.table_id,
                command_id="after-the-flood",
                seat_token=other.tokens[theirs.actor],
                command=command_to_proto(Roll(theirs.actor)),
            )
        ),
        5,
    )
    assert "DiceRolled" in [e.type for e in answer.events]
