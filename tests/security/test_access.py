"""Every call names who may make it (servicekit.access): an outsider with no token, a player of
another table and a registered player without a seat are refused before any handler runs."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import grpc
import pytest

from client import BotTable
from client.platform import Platform
from monopoly.v1 import (
    casino_pb2,
    casino_pb2_grpc,
    matchmaking_pb2,
    matchmaking_pb2_grpc,
    rating_pb2,
    rating_pb2_grpc,
    table_pb2,
    table_pb2_grpc,
    trade_pb2,
    trade_pb2_grpc,
)
from servicekit import auth

from ..integration.helpers import watch_snapshot

pytestmark = pytest.mark.integration

Call = Callable[[grpc.aio.Channel, str], Awaitable[object]]

#: The calls an outsider tried without a token (issue 13), by the service that answers them.
ANONYMOUS: dict[str, tuple[str, Call]] = {
    "CreateTable": (
        "table",
        lambda ch, t: table_pb2_grpc.TableServiceStub(ch).CreateTable(
            table_pb2.CreateTableRequest(mode="classic", players=["a", "b"]), timeout=10
        ),
    ),
    "GetTable": (
        "table",
        lambda ch, t: table_pb2_grpc.TableServiceStub(ch).GetTable(table_pb2.GetTableRequest(table_id=t), timeout=10),
    ),
    "RegisterPlayer": (
        "matchmaking",
        lambda ch, t: matchmaking_pb2_grpc.MatchmakingServiceStub(ch).RegisterPlayer(
            matchmaking_pb2.RegisterPlayerRequest(display_name="mallory"), timeout=10
        ),
    ),
    "ListTables": (
        "matchmaking",
        lambda ch, t: matchmaking_pb2_grpc.MatchmakingServiceStub(ch).ListTables(
            matchmaking_pb2.ListTablesRequest(), timeout=10
        ),
    ),
    "GetPool": (
        "casino",
        lambda ch, t: casino_pb2_grpc.CasinoServiceStub(ch).GetPool(casino_pb2.GetPoolRequest(table_id=t), timeout=10),
    ),
    "ListTrades": (
        "trade",
        lambda ch, t: trade_pb2_grpc.TradeServiceStub(ch).ListTrades(
            trade_pb2.ListTradesRequest(table_id=t), timeout=10
        ),
    ),
    "Leaderboard": (
        "rating",
        lambda ch, t: rating_pb2_grpc.RatingServiceStub(ch).Leaderboard(rating_pb2.LeaderboardRequest(), timeout=10),
    ),
}


@pytest.fixture(scope="module")
async def two_tables(stub: table_pb2_grpc.TableServiceStub) -> tuple[BotTable, BotTable]:
    a, b = BotTable(stub, seed=1301, players=2), BotTable(stub, seed=1302, players=2)
    await a.create()
    await b.create()
    return a, b


@pytest.mark.parametrize("method", list(ANONYMOUS))
async def test_an_outsider_without_a_token_is_refused(
    platform: Platform, two_tables: tuple[BotTable, BotTable], method: str
) -> None:
    service, call = ANONYMOUS[method]
    async with grpc.aio.insecure_channel(platform.target(service)) as channel:  # no credential at all
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await call(channel, two_tables[0].table_id)
    assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED, caught.value.details()
    assert "token" in (caught.value.details() or "")


async def test_a_player_of_one_table_cannot_read_or_watch_another(
    platform: Platform, two_tables: tuple[BotTable, BotTable]
) -> None:
    a, b = two_tables
    seat_of_a = a.tokens[0]
    async with grpc.aio.insecure_channel(platform.table_target) as channel:
        table = table_pb2_grpc.TableServiceStub(channel)
        assert (await watch_snapshot(table, a.table_id, seat_of_a)).table_id == a.table_id  # its own: yes
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await watch_snapshot(table, b.table_id, seat_of_a)
        assert caught.value.code() == grpc.StatusCode.PERMISSION_DENIED
        assert "another table" in (caught.value.details() or "")
        own = await table.GetTable(
            table_pb2.GetTableRequest(table_id=a.table_id), metadata=auth.metadata(seat_of_a), timeout=10
        )
        assert own.table_id == a.table_id
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await table.GetTable(
                table_pb2.GetTableRequest(table_id=b.table_id), metadata=auth.metadata(seat_of_a), timeout=10
            )
        assert caught.value.code() == grpc.StatusCode.PERMISSION_DENIED
        with pytest.raises(grpc.aio.AioRpcError) as caught:  # nor create tables: operators and services do
            await table.CreateTable(
                table_pb2.CreateTableRequest(mode="classic", players=["a", "b"]),
                metadata=auth.metadata(seat_of_a),
                timeout=10,
            )
        assert caught.value.code() == grpc.StatusCode.PERMISSION_DENIED


async def test_a_registered_player_watches_no_table_and_gets_spectator_tokens_only_when_signed_in(
    platform: Platform, two_tables: tuple[BotTable, BotTable]
) -> None:
    async with grpc.aio.insecure_channel(platform.target("matchmaking")) as channel:
        mm = matchmaking_pb2_grpc.MatchmakingServiceStub(channel)
        service = auth.metadata(auth.service_token(platform.token_secret, "gateway"))
        me = await mm.RegisterPlayer(matchmaking_pb2.RegisterPlayerRequest(display_name="ann"), metadata=service)
        listed = await mm.ListTables(matchmaking_pb2.ListTablesRequest(), metadata=auth.metadata(me.player_token))
        assert all(r.spectator_token for r in listed.running)
    async with grpc.aio.insecure_channel(platform.table_target) as channel:
        table = table_pb2_grpc.TableServiceStub(channel)
        # A player's identity once watched every table ("*"): now it holds for none.
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await watch_snapshot(table, two_tables[1].table_id, me.player_token)
        assert caught.value.code() == grpc.StatusCode.PERMISSION_DENIED
        for running in listed.running[:1]:  # a spectator token watches its own table, and only it
            assert (await watch_snapshot(table, running.table_id, running.spectator_token)).table_id == running.table_id
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await watch_snapshot(table, two_tables[1].table_id, running.spectator_token)
            assert caught.value.code() == grpc.StatusCode.PERMISSION_DENIED
