"""A small client of the auction service, for bots and players (proto/monopoly/v1/auction.proto).

When a table delegates its auctions (`CreateTable(external=["auction"])`), a
declined purchase opens an auction in the auction service (the table shows
`AuctionStarted` and waits). The bidder whose turn it is (`view.bidder`) bids
at least `view.min_bid` or passes before `view.deadline_unix_ms`; the
service settles the auction into the table, and the winner then owes the
price to the bank there (a pending payment, paid with `Pay` at the table).
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import grpc

from monopoly.v1 import auction_pb2, auction_pb2_grpc

from .channels import platform_channel

AuctionView = auction_pb2.AuctionView


class AuctionClient:
    """Calls to one auction service; seat tokens are the table's (`JoinTable`)."""

    def __init__(self, target: str, channel: grpc.aio.Channel | None = None) -> None:
        self._own = channel is None
        self.channel = channel if channel is not None else platform_channel(target)
        self.stub = auction_pb2_grpc.AuctionServiceStub(self.channel)

    async def close(self) -> None:
        if self._own:
            await self.channel.close()

    async def __aenter__(self) -> AuctionClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def current(self, table_id: str, timeout: float = 10.0) -> AuctionView | None:
        """The table's open auction, or None when none is open."""
        try:
            view: AuctionView = await self.stub.GetAuction(
                auction_pb2.GetAuctionRequest(table_id=table_id), timeout=timeout
            )
        except grpc.aio.AioRpcError as exc:
            if exc.code() == grpc.StatusCode.NOT_FOUND:
                return None
            raise
        return view if view.status == "open" else None

    async def get(self, table_id: str, auction_id: int, timeout: float = 10.0) -> AuctionView:
        """One auction of the table, open or closed."""
        view: AuctionView = await self.stub.GetAuction(
            auction_pb2.GetAuctionRequest(table_id=table_id, auction_id=auction_id), timeout=timeout
        )
        return view

    async def bid(
        self, table_id: str, seat: int, amount: int, seat_token: str, auction_id: int = 0, timeout: float = 10.0
    ) -> AuctionView:
        """Bid `amount` for `seat` (A1: at least `min_bid`; A3: at most what the seat could raise).
        A refused bid raises `grpc.aio.AioRpcError` FAILED_PRECONDITION with the rule ID."""
        view: AuctionView = await self.stub.PlaceBid(
            auction_pb2.PlaceBidRequest(
                table_id=table_id, auction_id=auction_id, seat=seat, amount=amount, seat_token=seat_token
            ),
            timeout=timeout,
        )
        return view

    async def pass_(
        self, table_id: str, seat: int, seat_token: str, auction_id: int = 0, timeout: float = 10.0
    ) -> AuctionView:
        """`seat` passes: it is out of this auction (A1)."""
        view: AuctionView = await self.stub.Pass(
            auction_pb2.PassRequest(table_id=table_id, auction_id=auction_id, seat=seat, seat_token=seat_token),
            timeout=timeout,
        )
        return view

    async def watch(self, table_id: str, auction_id: int = 0) -> AsyncIterator[AuctionView]:
        """The auction's view now and after every bid, pass or time-out, until it is closed."""
        async for view in self.stub.WatchAuction(
            auction_pb2.GetAuctionRequest(table_id=table_id, auction_id=auction_id)
        ):
            yield view


async def current(target: str, table_id: str) -> AuctionView | None:
    """The table's open auction at the auction service `target`, or None."""
    async with AuctionClient(target) as client:
        return await client.current(table_id)


async def bid(target: str, table_id: str, seat: int, amount: int, seat_token: str, auction_id: int = 0) -> AuctionView:
    async with AuctionClient(target) as client:
        return await client.bid(table_id, seat, amount, seat_token, auction_id)


async def pass_(target: str, table_id: str, seat: int, seat_token: str, auction_id: int = 0) -> AuctionView:
    async with AuctionClient(target) as client:
        return await client.pass_(table_id, seat, seat_token, auction_id)


__all__ = ["AuctionClient", "AuctionView", "bid", "current", "pass_"]
