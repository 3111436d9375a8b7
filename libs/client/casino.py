"""Small async wrappers over the casino service (proto/monopoly/v1/casino.proto) for bot clients.

A table that delegates its casino (`CreateTable(external=["casino"])`) opens a
bet when a player lands on the casino (its `CasinoOpened` event); the player
then bets or declines here, with the seat token the table handed out, before
the turn timer runs out (or the casino declines for them). The table applies
the result by itself (it consumes the casino's events).
"""

from __future__ import annotations

from collections.abc import Sequence

import grpc

from monopoly.v1 import casino_pb2, casino_pb2_grpc

from .channels import platform_channel


def connect(target: str) -> tuple[grpc.aio.Channel, casino_pb2_grpc.CasinoServiceStub]:
    channel = platform_channel(target)
    return channel, casino_pb2_grpc.CasinoServiceStub(channel)


async def open_bet(
    stub: casino_pb2_grpc.CasinoServiceStub, table_id: str, timeout: float = 10.0
) -> casino_pb2.BetView | None:
    """The table's open bet, or None if none is open (yet: the casino opens it from the table's event)."""
    try:
        bet: casino_pb2.BetView = await stub.GetBet(casino_pb2.GetBetRequest(table_id=table_id), timeout=timeout)
    except grpc.aio.AioRpcError as exc:
        if exc.code() == grpc.StatusCode.NOT_FOUND:
            return None
        raise
    return bet


async def place_bet(
    stub: casino_pb2_grpc.CasinoServiceStub,
    table_id: str,
    seat: int,
    seat_token: str,
    numbers: Sequence[int],
    timeout: float = 10.0,
    bet_id: str = "",
) -> casino_pb2.BetView:
    """K1: bet the stake on 1 to 3 distinct numbers; the answer is the settled bet (die, payout, jackpot).
    With `bet_id` (from `open_bet`), only that bet: asked again late, it never lands on a later one."""
    request = casino_pb2.PlaceBetRequest(
        table_id=table_id, seat=seat, numbers=list(numbers), seat_token=seat_token, bet_id=bet_id
    )
    bet: casino_pb2.BetView = await stub.PlaceBet(request, timeout=timeout)
    return bet


async def decline(
    stub: casino_pb2_grpc.CasinoServiceStub,
    table_id: str,
    seat: int,
    seat_token: str,
    timeout: float = 10.0,
    bet_id: str = "",
) -> casino_pb2.BetView:
    """K1: no bet; the turn goes on (`bet_id` as in `place_bet`)."""
    request = casino_pb2.DeclineBetRequest(table_id=table_id, seat=seat, seat_token=seat_token, bet_id=bet_id)
    bet: casino_pb2.BetView = await stub.Decline(request, timeout=timeout)
    return bet


async def pool(stub: casino_pb2_grpc.CasinoServiceStub, table_id: str, timeout: float = 10.0) -> casino_pb2.PoolView:
    """The table's jackpot pool (K4)."""
    view: casino_pb2.PoolView = await stub.GetPool(casino_pb2.GetPoolRequest(table_id=table_id), timeout=timeout)
    return view
