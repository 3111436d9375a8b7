"""`Play` streams, which open without a token (each request brings its own): one that never sends is
closed, an open one counts toward its principal's streams, and no request may be larger than the
platform's requests ever are."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import asyncpg
import grpc
import pytest

from client import BotTable
from client.platform import Platform
from engine import EndTurn
from monopoly.v1 import table_pb2, table_pb2_grpc
from servicekit import grpcserver
from servicekit.quotas import QuotaSettings
from servicekit.wire import command_to_proto
from services.table import api

from ..integration.helpers import get
from .helpers import table_service

pytestmark = pytest.mark.integration


@pytest.fixture
async def two_streams(
    platform: Platform, pool: asyncpg.Pool, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[table_pb2_grpc.TableServiceStub]:
    """A table service in this process whose principals may hold two streams each, and whose Play
    streams must bring their first request within half a second."""
    monkeypatch.setattr(api, "PLAY_FIRST_REQUEST_S", 0.5)
    async with table_service(platform, pool, QuotaSettings(streams=2)) as stub:
        yield stub


async def test_a_play_stream_that_sends_nothing_is_closed(two_streams: table_pb2_grpc.TableServiceStub) -> None:
    async def silent() -> AsyncIterator[table_pb2.SubmitCommandRequest]:
        await asyncio.sleep(3600)
        yield table_pb2.SubmitCommandRequest()

    call = two_streams.Play(silent())
    answers = await asyncio.wait_for(_all(call), 10)
    assert answers == [] and await call.code() == grpc.StatusCode.OK


async def test_a_seats_play_streams_count_toward_its_open_streams(two_streams: table_pb2_grpc.TableServiceStub) -> None:
    game = BotTable(two_streams, seed=1411, players=2)
    await game.create()
    view = await get(two_streams, game.table_id)
    idle = 1 - view.actor

    def request(i: int) -> table_pb2.SubmitCommandRequest:
        return table_pb2.SubmitCommandRequest(
            table_id=game.table_id,
            command_id=f"idle-{i}",
            seat_token=game.tokens[idle],
            command=command_to_proto(EndTurn(idle)),  # not its turn: refused G2, changes nothing
        )

    held: list[asyncio.Queue[table_pb2.SubmitCommandRequest | None]] = []
    calls = []
    for i in range(3):
        queue: asyncio.Queue[table_pb2.SubmitCommandRequest | None] = asyncio.Queue()
        queue.put_nowait(request(i))
        held.append(queue)
        calls.append(two_streams.Play(_from(queue)))
    codes = [(await asyncio.wait_for(call.read(), 10)).refused.code for call in calls]
    assert codes.count("RESOURCE_EXHAUSTED") == 1 and codes.count("FAILED_PRECONDITION") == 2, codes
    for queue in held:
        queue.put_nowait(None)
    for call in calls:
        while await asyncio.wait_for(call.read(), 10) is not grpc.aio.EOF:
            pass
    again = two_streams.Play(_once(request(9)))  # the streams closed gave their places back
    assert [a.refused.code for a in await asyncio.wait_for(_all(again), 10)] == ["FAILED_PRECONDITION"]


async def test_a_request_larger_than_any_the_platform_makes_is_refused(
    two_streams: table_pb2_grpc.TableServiceStub,
) -> None:
    game = BotTable(two_streams, seed=1412, players=2)
    await game.create()
    huge = table_pb2.SubmitCommandRequest(table_id=game.table_id, command_id="x" * (grpcserver.MAX_REQUEST_BYTES + 1))
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await two_streams.SubmitCommand(huge, timeout=10)
    assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED


async def _from(
    queue: asyncio.Queue[table_pb2.SubmitCommandRequest | None],
) -> AsyncIterator[table_pb2.SubmitCommandRequest]:
    while (item := await queue.get()) is not None:
        yield item


async def _once(item: table_pb2.SubmitCommandRequest) -> AsyncIterator[table_pb2.SubmitCommandRequest]:
    yield item


async def _all(call: object) -> list[table_pb2.PlayResponse]:
    return [answer async for answer in call]  # type: ignore[attr-defined]
