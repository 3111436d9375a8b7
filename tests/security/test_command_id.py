"""An idempotency key is bound to what it was first used for: a command id reused with another
command, or by another seat, is refused (ALREADY_EXISTS) and changes nothing."""

from __future__ import annotations

import grpc
import pytest

from client import BotTable
from engine import EndTurn, Roll
from monopoly.v1 import table_pb2, table_pb2_grpc
from servicekit.wire import command_to_proto

from ..integration.helpers import get

pytestmark = pytest.mark.integration


async def test_a_reused_command_id_with_another_body_or_from_another_seat_is_refused(
    stub: table_pb2_grpc.TableServiceStub,
) -> None:
    game = BotTable(stub, seed=1313, players=2)
    await game.create()
    view = await get(stub, game.table_id)
    actor, other = view.actor, 1 - view.actor

    def submit(seat: int, command: object) -> table_pb2.SubmitCommandRequest:
        return table_pb2.SubmitCommandRequest(
            table_id=game.table_id,
            command_id="one-id",
            seat_token=game.tokens[seat],
            command=command_to_proto(command),  # type: ignore[arg-type]
        )

    first = await stub.SubmitCommand(submit(actor, Roll(actor)), timeout=10)
    assert await stub.SubmitCommand(submit(actor, Roll(actor)), timeout=10) == first  # a true retry
    for seat, command in ((actor, EndTurn(actor)), (other, Roll(other))):
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await stub.SubmitCommand(submit(seat, command), timeout=10)
        assert caught.value.code() == grpc.StatusCode.ALREADY_EXISTS
        assert "one-id" in (caught.value.details() or "") and "another" in (caught.value.details() or "")
    assert (await get(stub, game.table_id)).seq == first.last_seq  # nothing changed
