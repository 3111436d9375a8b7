"""Every field is checked at the edge: bytes that do not decode, NUL in any string, names that are
control rather than data, settings nested too deep are INVALID_ARGUMENT, never UNKNOWN or INTERNAL,
and write nothing."""

from __future__ import annotations

from collections.abc import AsyncIterator

import asyncpg
import grpc
import pytest

from client import platform_channel
from client.matchmaking import MatchmakingClient
from client.platform import Platform
from monopoly.v1 import matchmaking_pb2, table_pb2, table_pb2_grpc

from .helpers import table_state

pytestmark = pytest.mark.integration

TABLE = "/monopoly.v1.TableService"


@pytest.fixture(scope="module")
async def mm(platform: Platform) -> AsyncIterator[MatchmakingClient]:
    client = MatchmakingClient(platform.target("matchmaking"))
    try:
        yield client
    finally:
        await client.close()


async def test_undecodable_request_bytes_are_invalid_argument_on_a_unary_call(platform: Platform) -> None:
    async with platform_channel(platform.table_target) as channel:
        for method in ("GetTable", "CreateTable", "SubmitCommand"):
            call = channel.unary_unary(f"{TABLE}/{method}")  # raw bytes, no serializer
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await call(b"\xff\xff\xff\xff", timeout=30)
            assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT, (method, caught.value.details())


async def test_undecodable_request_bytes_are_invalid_argument_on_the_play_stream(platform: Platform) -> None:
    """Refused in the stream like any other request: the stream, and what was sent behind it, go on."""
    async with platform_channel(platform.table_target) as channel:
        call = channel.stream_stream(f"{TABLE}/Play")
        stream = call(timeout=30)
        await stream.write(b"\x0a\xff\xff")  # a field 1 string whose length runs past the end
        await stream.done_writing()
        answers = [table_pb2.PlayResponse.FromString(raw) async for raw in stream]
        assert [(a.command_id, a.refused.code) for a in answers] == [("", "INVALID_ARGUMENT")], answers
        assert "do not decode" in answers[0].refused.message
        assert await stream.code() == grpc.StatusCode.OK


async def test_a_nul_in_any_string_field_is_invalid_argument(stub: table_pb2_grpc.TableServiceStub) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await stub.GetTable(table_pb2.GetTableRequest(table_id="abc\x00"), timeout=30)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "NUL" in (caught.value.details() or "")


async def test_seat_names_are_nfc_normalised(stub: table_pb2_grpc.TableServiceStub) -> None:
    decomposed = "Ame\u0301lie"  # e + combining acute
    reply = await stub.CreateTable(
        table_pb2.CreateTableRequest(mode="classic", players=[decomposed, "  bob  "], seed=3), timeout=30
    )
    state = await table_state(stub, reply.table_id)
    assert [p.name for p in state.players] == ["Am\u00e9lie", "bob"]


@pytest.mark.parametrize(
    "name",
    ["a\x00b", "line\nbreak", "\x1b[2Jwiped", "admin\u202egnp.exe", "\u200b", "\u200b\u200c\u2060", "", "x" * 49],
)
async def test_register_player_refuses_names_that_are_control_not_data(
    mm: MatchmakingClient, pool: asyncpg.Pool, name: str
) -> None:
    async with pool.acquire() as conn:
        before = await conn.fetchval("SELECT count(*) FROM matchmaking.players")
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await mm.stub.RegisterPlayer(matchmaking_pb2.RegisterPlayerRequest(display_name=name), timeout=30)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT, caught.value.details()
    async with pool.acquire() as conn:
        assert await conn.fetchval("SELECT count(*) FROM matchmaking.players") == before


async def test_register_player_keeps_a_normalised_visible_name(mm: MatchmakingClient, pool: asyncpg.Pool) -> None:
    player = await mm.register("  Zoe\u0308 \U0001f3b2 ")
    async with pool.acquire() as conn:
        name = await conn.fetchval(
            "SELECT display_name FROM matchmaking.players WHERE player_id = $1", player.player_id
        )
    assert name == "Zo\u00eb \U0001f3b2"


@pytest.mark.parametrize(
    "settings",
    ["[" * 30_000 + "]" * 30_000, '{"starting_cash": ' + "[" * 50 + "]" * 50 + "}", '{"a\\u0000": 1}'],
)
async def test_a_custom_table_refuses_settings_nested_too_deep_or_holding_nul(
    mm: MatchmakingClient, settings: str
) -> None:
    host = await mm.register("host")
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await mm.host_custom(host, settings)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT, caught.value.details()
