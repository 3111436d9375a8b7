"""Bots for the empty seats of people's tables: what plays the seats matchmaking filled with bots.

A table formed with `bot_fill` (a person queued or hosted and asked for bots) has seats with no
one behind them. `BotSeats` finds such tables in the lobby (`ListTables`), joins their bot
seats as the platform's bot driver (JoinTable with a service token) and plays them with
`BotTable`, like any other client, through the public APIs; it also answers the trade
proposals people make to those seats at the trade service.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

import grpc

from engine import AcceptTrade
from engine.state import TradeOffer
from monopoly.v1 import matchmaking_pb2, matchmaking_pb2_grpc, table_pb2, table_pb2_grpc, trade_pb2
from servicekit import auth
from servicekit.settings import token_secret

from . import BotTable, SubProtocolStubs

log = logging.getLogger("botseats")
#: How often the lobby is read for new tables with bot seats, and open trades for answers.
POLL_S = 0.5


class BotSeats:
    """Play every bot seat of the platform's people's tables until `stop`."""

    def __init__(
        self,
        table: table_pb2_grpc.TableServiceStub,
        matchmaking: matchmaking_pb2_grpc.MatchmakingServiceStub,
        services: SubProtocolStubs,
        think_s: float = 0.2,
        skip: Callable[[str], bool] = lambda _table_id: False,
    ) -> None:
        self.table, self.matchmaking, self.services = table, matchmaking, services
        self.think_s = think_s
        self.skip = skip  # tables another driver plays whole (`monopoly run`'s resumed ones)
        self.token = auth.renewed_service_token(token_secret(), "bots")  # the seats run for days
        self.playing: dict[str, tuple[BotTable, asyncio.Task[object]]] = {}
        self.answered: set[tuple[str, int]] = set()
        self._stop = asyncio.Event()

    async def run(self) -> None:
        try:
            while not self._stop.is_set():
                with contextlib.suppress(grpc.aio.AioRpcError):
                    await self._find_tables()
                for table_id, (game, task) in list(self.playing.items()):
                    if task.done():
                        self.playing.pop(table_id)
                        if not task.cancelled() and task.exception() is not None:
                            log.error("the bots of table %s stopped", table_id, exc_info=task.exception())
                    else:
                        with contextlib.suppress(grpc.aio.AioRpcError):
                            await self._answer_trades(game)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stop.wait(), POLL_S)
        finally:
            for _, task in self.playing.values():
                task.cancel()
            await asyncio.gather(*(task for _, task in self.playing.values()), return_exceptions=True)

    def stop(self) -> None:
        self._stop.set()

    async def _find_tables(self) -> None:
        tables = await self.matchmaking.ListTables(matchmaking_pb2.ListTablesRequest(), timeout=10)
        for running in tables.running:
            if running.table_id in self.playing or self.skip(running.table_id):
                continue
            bots = [s.seat for s in running.seats if s.is_bot]
            if not bots or len(bots) == len(running.seats):
                continue  # a table of people only, or of bots only (played by whoever formed it)
            tokens = {}
            for seat in bots:
                joined = await self.table.JoinTable(
                    table_pb2.JoinTableRequest(table_id=running.table_id, seat=seat, service_token=self.token()),
                    timeout=10,
                )
                tokens[seat] = joined.seat_token
            game = BotTable(
                self.table,
                mode=running.mode,
                table_id=running.table_id,
                tokens=tokens,
                services=self.services,
                think_s=self.think_s,
                seed=abs(hash(running.table_id)) % 10_000 + 1,
            )
            self.playing[running.table_id] = (game, asyncio.create_task(game.play()))
            log.info("bots play seats %s of table %s", bots, running.table_id)

    async def _answer_trades(self, game: BotTable) -> None:
        """A person's proposal to a bot seat: the bot decides on the table as it stands (T2)."""
        stub = self.services.trade
        if stub is None or game.state is None or game.state.finished:
            return
        reply = await stub.ListTrades(trade_pb2.ListTradesRequest(table_id=game.table_id, open_only=True), timeout=10)
        for view in reply.trades:
            other = view.terms.counterparty
            key = (game.table_id, int(view.trade_id))
            if other not in game.tokens or key in self.answered or view.status != "open":
                continue
            self.answered.add(key)
            t = view.terms
            local = game.state.copy()
            local.trade = TradeOffer(
                int(view.trade_id),
                view.proposer,
                other,
                t.give_cash,
                tuple(t.give_squares),
                t.take_cash,
                tuple(t.take_squares),
                tuple(t.give_cards),
                tuple(t.take_cards),
            )
            bot = game._bots.get(other) if hasattr(game, "_bots") else None
            accept = bot is not None and isinstance(bot.choose(local, other), AcceptTrade)
            action = trade_pb2.TradeActionRequest(
                table_id=game.table_id, trade_id=view.trade_id, seat=other, seat_token=game.tokens[other]
            )
            if self.think_s:
                await asyncio.sleep(self.think_s)
            call = stub.AcceptTrade if accept else stub.DeclineTrade
            with contextlib.suppress(grpc.aio.AioRpcError):  # stale by now (the turn ended): nothing to answer
                await call(action, timeout=10)


__all__ = ["BotSeats"]
