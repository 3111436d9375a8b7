"""The casino service's gRPC API (proto/monopoly/v1/casino.proto)."""

from __future__ import annotations

import grpc

from monopoly.v1 import casino_pb2, casino_pb2_grpc
from servicekit import auth, validate
from servicekit.errors import BadRequest
from servicekit.grpcserver import Registration

from .bets import Casino, view

SERVICE_NAME = casino_pb2.DESCRIPTOR.services_by_name["CasinoService"].full_name


def _bet_id(value: str) -> str:
    if len(value) > 128:
        raise BadRequest("bet_id is at most 128 characters")
    return value


class CasinoService(casino_pb2_grpc.CasinoServiceServicer):
    def __init__(self, casino: Casino) -> None:
        self.casino = casino

    def _authorize(self, table_id: str, seat: int) -> None:
        """The call's token (verified by the server's interceptor) must act for this seat of this table."""
        auth.current_claims().require_seat(table_id, seat)

    async def PlaceBet(
        self, request: casino_pb2.PlaceBetRequest, context: grpc.aio.ServicerContext
    ) -> casino_pb2.BetView:
        table_id = validate.table_id(request.table_id)
        self._authorize(table_id, request.seat)
        bet_id = _bet_id(request.bet_id)
        return view(await self.casino.place(table_id, request.seat, tuple(request.numbers), bet_id))

    async def Decline(
        self, request: casino_pb2.DeclineBetRequest, context: grpc.aio.ServicerContext
    ) -> casino_pb2.BetView:
        table_id = validate.table_id(request.table_id)
        self._authorize(table_id, request.seat)
        return view(await self.casino.decline(table_id, request.seat, _bet_id(request.bet_id)))

    async def GetBet(self, request: casino_pb2.GetBetRequest, context: grpc.aio.ServicerContext) -> casino_pb2.BetView:
        return view(await self.casino.get(validate.table_id(request.table_id), _bet_id(request.bet_id)))

    async def GetPool(
        self, request: casino_pb2.GetPoolRequest, context: grpc.aio.ServicerContext
    ) -> casino_pb2.PoolView:
        table_id = validate.table_id(request.table_id)
        amount, bets = await self.casino.pool_of(table_id)
        return casino_pb2.PoolView(table_id=table_id, pool=amount, bets=bets)


def register(service: CasinoService) -> list[Registration]:
    return [lambda server: casino_pb2_grpc.add_CasinoServiceServicer_to_server(service, server)]


__all__ = ["SERVICE_NAME", "CasinoService", "register"]
