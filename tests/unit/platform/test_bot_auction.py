"""A1 through the auction service: an auction that vanished while a bot thought (settled by another
bidder's pass or a time-out, or reopened by a restarted service) is the normal case: the bid ends
quietly and the driver decides on the table's next events; no error escapes the bot's task."""

from __future__ import annotations

import asyncio
from typing import Any

import grpc
import pytest

import client
from bots import make_bot
from client import BotTable
from engine import BANK, AuctionStarted, DeclineProperty, Roll, SettleAuction, TableState, apply, classic, new_game
from engine.rng import draw
from monopoly.v1 import auction_pb2
from tests.unit.engine.helpers import force_dice, place

SQUARE = 6


def auction_at_a_service(think_s: float = 0.0) -> tuple[TableState, AuctionStarted, BotTable]:
    """A 3-player table whose auctions the auction service runs, an auction of square 6 just started
    there, and a driver of every seat (its bots heuristic) with no service yet."""
    state, _ = new_game(classic().with_changes(external=("auction",)), ["a", "b", "c"], 1)
    me = state.current
    place(state, me, SQUARE - 3)
    force_dice(state, 1, 2)
    apply(state, Roll(me))
    started = apply(state, DeclineProperty(me))[-1]
    assert isinstance(started, AuctionStarted)
    bot = BotTable(stub=None, think_s=think_s, table_id="t", tokens={s: f"token-{s}" for s in range(3)})  # type: ignore[arg-type]
    bot.state = state
    bot._stopped = False
    bot._bots = {s: make_bot("heuristic", draw(1, 1000 + s)) for s in range(3)}
    return state, started, bot


class VanishingAuction:
    """An auction service whose auction is open when asked, and settled at the table right after."""

    def __init__(self, bot: BotTable, started: AuctionStarted) -> None:
        self.bot, self.started = bot, started
        self.moves: list[Any] = []

    async def GetAuction(self, request: auction_pb2.GetAuctionRequest, timeout: float) -> auction_pb2.AuctionView:
        state = self.bot.state
        assert state is not None
        # while the bot thinks, the auction settles without a bid (the table's events say so)
        asyncio.get_running_loop().call_soon(apply, state, SettleAuction(BANK, self.started.auction_id, BANK, 0))
        bidders = list(self.started.bidders)
        return auction_pb2.AuctionView(status="open", bidder=bidders[0], bidders=bidders)

    async def PlaceBid(self, request: Any, timeout: float) -> auction_pb2.AuctionView:
        self.moves.append(request)
        raise AssertionError("a bid on an auction the table settled")

    Pass = PlaceBid


async def test_A1_a_bid_on_an_auction_settled_while_the_bot_thought_ends_quietly() -> None:
    state, started, bot = auction_at_a_service(think_s=0.01)
    service = VanishingAuction(bot, started)
    bot.services.auction = service  # type: ignore[assignment]
    seq = state.seq
    await asyncio.wait_for(bot._bid_until_settled(started.auction_id, seq), 5)
    assert state.auction is None and state.seq > seq  # settled at the table meanwhile
    assert service.moves == [] and bot.errors == 0


class LaggingAuction:
    """An auction service that has not opened the table's auction yet (NOT_FOUND) for `lag` reads; the
    table settles it at the last one."""

    def __init__(self, bot: BotTable, started: AuctionStarted, lag: int) -> None:
        self.bot, self.started, self.lag = bot, started, lag
        self.reads = 0

    async def GetAuction(self, request: auction_pb2.GetAuctionRequest, timeout: float) -> auction_pb2.AuctionView:
        self.reads += 1
        if self.reads == self.lag:
            state = self.bot.state
            assert state is not None
            apply(state, SettleAuction(BANK, self.started.auction_id, BANK, 0))
        raise grpc.aio.AioRpcError(grpc.StatusCode.NOT_FOUND, grpc.aio.Metadata(), grpc.aio.Metadata(), "no auction")


async def test_A1_a_bot_reads_a_service_behind_its_table_ever_less_often(monkeypatch: pytest.MonkeyPatch) -> None:
    """Under load a service lags its tables; bots reading it every 50 ms would add to the load that makes
    it lag. Each further read waits twice as long, up to a second, and every read is counted."""
    state, started, bot = auction_at_a_service()
    service = LaggingAuction(bot, started, lag=9)
    bot.services.auction = service  # type: ignore[assignment]
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    monkeypatch.setattr(client.asyncio, "sleep", sleep)
    await bot._bid_until_settled(started.auction_id, state.seq)
    assert waits == [0.05, 0.1, 0.2, 0.4, 0.8, 1.0, 1.0, 1.0, 1.0]
    assert service.reads == 9 and bot.service_polls == 9
