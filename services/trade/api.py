"""The trade service's gRPC API (proto/monopoly/v1/trade.proto)."""

from __future__ import annotations

import grpc

from monopoly.v1 import trade_pb2, trade_pb2_grpc
from servicekit import auth, validate
from servicekit.errors import BadRequest
from servicekit.grpcserver import Registration

from .trades import Terms, Trades, view

SERVICE_NAME = trade_pb2.DESCRIPTOR.services_by_name["TradeService"].full_name


def _terms(request: trade_pb2.ProposeTradeRequest) -> Terms:
    if not request.HasField("terms"):
        raise BadRequest("terms are required")
    t = request.terms
    return Terms(
        t.counterparty,
        t.give_cash,
        tuple(t.give_squares),
        t.take_cash,
        tuple(t.take_squares),
        tuple(t.give_cards),
        tuple(t.take_cards),
    )


class TradeService(trade_pb2_grpc.TradeServiceServicer):
    def __init__(self, trades: Trades) -> None:
        self.trades = trades

    async def ProposeTrade(
        self, request: trade_pb2.ProposeTradeRequest, context: grpc.aio.ServicerContext
    ) -> trade_pb2.TradeView:
        table_id = validate.table_id(request.table_id)
        claims = auth.current_claims()
        return view(await self.trades.propose(table_id, request.seat, claims, _terms(request), request.request_id))

    async def AcceptTrade(
        self, request: trade_pb2.TradeActionRequest, context: grpc.aio.ServicerContext
    ) -> trade_pb2.TradeView:
        r = request
        return view(await self.trades.accept(validate.table_id(r.table_id), r.trade_id, r.seat, auth.current_claims()))

    async def DeclineTrade(
        self, request: trade_pb2.TradeActionRequest, context: grpc.aio.ServicerContext
    ) -> trade_pb2.TradeView:
        r = request
        return view(await self.trades.decline(validate.table_id(r.table_id), r.trade_id, r.seat, auth.current_claims()))

    async def CancelTrade(
        self, request: trade_pb2.TradeActionRequest, context: grpc.aio.ServicerContext
    ) -> trade_pb2.TradeView:
        r = request
        return view(await self.trades.cancel(validate.table_id(r.table_id), r.trade_id, r.seat, auth.current_claims()))

    async def ListTrades(
        self, request: trade_pb2.ListTradesRequest, context: grpc.aio.ServicerContext
    ) -> trade_pb2.ListTradesResponse:
        rows = await self.trades.list(validate.table_id(request.table_id), request.open_only)
        return trade_pb2.ListTradesResponse(trades=[view(t) for t in rows])


def register(service: TradeService) -> list[Registration]:
    return [lambda server: trade_pb2_grpc.add_TradeServiceServicer_to_server(service, server)]


__all__ = ["SERVICE_NAME", "TradeService", "register"]
