"""A seat's token: JoinTable answers the same token every time, so the bot driver asks again when a
call did not get through (thousands of tables forming at once saw JoinTable end CANCELLED before the
table service handled it), and gives up on a refusal at once or after JOIN_ATTEMPTS tries."""

from __future__ import annotations

import grpc
import pytest

import client
from client import JOIN_ATTEMPTS, BotTable
from monopoly.v1 import table_pb2


def rpc_error(code: grpc.StatusCode) -> grpc.aio.AioRpcError:
    return grpc.aio.AioRpcError(code, grpc.aio.Metadata(), grpc.aio.Metadata(), details=code.name)


class Seats:
    """A table service whose JoinTable fails with `code` `failures` times, then answers."""

    def __init__(self, failures: int, code: grpc.StatusCode = grpc.StatusCode.CANCELLED) -> None:
        self.failures, self.code, self.calls = failures, code, 0

    async def JoinTable(self, request: table_pb2.JoinTableRequest, timeout: float) -> table_pb2.JoinTableResponse:
        self.calls += 1
        if self.calls <= self.failures:
            raise rpc_error(self.code)
        return table_pb2.JoinTableResponse(seat_token=f"token-{request.table_id}-{request.seat}")


@pytest.fixture(autouse=True)
def quick_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(client, "RETRY_S", 0.001)


def driver(stub: Seats) -> BotTable:
    return BotTable(stub=stub, table_id="t1")  # type: ignore[arg-type]


async def test_a_join_that_did_not_get_through_is_made_again() -> None:
    stub = Seats(failures=2)
    bot = driver(stub)
    assert await bot._join(3) == "token-t1-3"
    assert stub.calls == 3 and bot.unavailable == 2


async def test_a_refused_join_is_not_made_again() -> None:
    stub = Seats(failures=1, code=grpc.StatusCode.PERMISSION_DENIED)
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await driver(stub)._join(0)
    assert refused.value.code() == grpc.StatusCode.PERMISSION_DENIED and stub.calls == 1


async def test_a_join_gives_up_after_its_attempts() -> None:
    stub = Seats(failures=JOIN_ATTEMPTS)
    with pytest.raises(grpc.aio.AioRpcError) as failed:
        await driver(stub)._join(0)
    assert failed.value.code() == grpc.StatusCode.CANCELLED and stub.calls == JOIN_ATTEMPTS
