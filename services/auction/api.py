"""The auction service's gRPC API (proto/monopoly/v1/auction.proto)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import grpc

from engine.auction import Bid, PassBid
from monopoly.v1 import auction_pb2, auction_pb2_grpc
from servicekit import auth, validate
from servicekit.errors import BadRequest
from servicekit.grpcserver import Registration

from .auctions import MOVES, Auctions

SERVICE_NAME = auction_pb2.DESCRIPTOR.services_by_name["AuctionService"].full_name


def _auction_id(value: int) -> int:
    if value < 0:
        raise BadRequest("auction_id must be 0 (the open auction) or more")
    return value


class AuctionService(auction_pb2_grpc.AuctionServiceServicer):
    def __init__(self, auctions: Auctions) -> None:
        self.auctions = auctions

    def _authorise(self, table_id: str, seat: int) -> None:
        """The call's token (verified by the server's interceptor) must act for this seat of this table."""
        try:
            auth.current_claims().require_seat(table_id, seat)
        except PermissionError:  # Unauthenticated and Forbidden both
            MOVES.labels("unauthorised").inc()
            raise

    async def PlaceBid(
        self, request: auction_pb2.PlaceBidRequest, context: grpc.aio.ServicerContext
    ) -> auction_pb2.AuctionView:
        table_id = validate.table_id(request.table_id)
        self._authorise(table_id, request.seat)
        return await self.auctions.move(
            table_id, _auction_id(request.auction_id), Bid(request.seat, int(request.amount))
        )

    async def Pass(
        self, request: auction_pb2.PassRequest, context: grpc.aio.ServicerContext
    ) -> auction_pb2.AuctionView:
        table_id = validate.table_id(request.table_id)
        self._authorise(table_id, request.seat)
        return await self.auctions.move(table_id, _auction_id(request.auction_id), PassBid(request.seat))

    async def GetAuction(
        self, request: auction_pb2.GetAuctionRequest, context: grpc.aio.ServicerContext
    ) -> auction_pb2.AuctionView:
        return await self.auctions.get(validate.table_id(request.table_id), _auction_id(request.auction_id))

    async def WatchAuction(
        self, request: auction_pb2.GetAuctionRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[auction_pb2.AuctionView]:
        views = self.auctions.watch(validate.table_id(request.table_id), _auction_id(request.auction_id))
        async with contextlib.aclosing(views):
            async for item in views:
                yield item


def register(service: AuctionService) -> list[Registration]:
    return [lambda server: auction_pb2_grpc.add_AuctionServiceServicer_to_server(service, server)]


__all__ = ["SERVICE_NAME", "AuctionService", "register"]
