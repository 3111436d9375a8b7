"""Async wrappers of the trade service for clients and bots (proto/monopoly/v1/trade.proto).

A bot that holds a seat token drives trades like this: on its own turn, while
the table is in a trade window (before rolling, deciding a purchase, paying),
or at any time on a hasbro table (T6), `propose` terms to another seat; on every turn, `open_for(table_id, seat)`
lists the proposals addressed to it, to `accept` or `decline`. A refusal is a
`grpc.aio.AioRpcError` with FAILED_PRECONDITION and the rule ID in the
trailing metadata `rule-id` (`rule_of`).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

import grpc

from monopoly.v1 import trade_pb2, trade_pb2_grpc

from .channels import platform_channel


def connect_trade(target: str) -> tuple[grpc.aio.Channel, trade_pb2_grpc.TradeServiceStub]:
    channel = platform_channel(target)
    return channel, trade_pb2_grpc.TradeServiceStub(channel)


def rule_of(exc: grpc.aio.AioRpcError) -> str | None:
    """The rule ID of a refusal (FAILED_PRECONDITION), if any."""
    for key, value in exc.trailing_metadata() or ():
        if key == "rule-id":
            return str(value)
    return None


async def propose(
    stub: trade_pb2_grpc.TradeServiceStub,
    table_id: str,
    seat: int,
    token: str,
    counterparty: int,
    give_cash: int = 0,
    give_squares: Sequence[int] = (),
    take_cash: int = 0,
    take_squares: Sequence[int] = (),
    timeout: float = 10.0,
    give_cards: Sequence[int] = (),
    take_cards: Sequence[int] = (),
    request_id: str = "",
) -> trade_pb2.TradeView:
    """`seat` (whose turn it is; hasbro: any seat, T6) offers `give_*` for the counterparty's `take_*`
    (`*_cards`: Get Out of Jail Free cards, hasbro only). `request_id` (default: a new one) makes a
    retry of this proposal answer the first one."""
    terms = trade_pb2.TradeTerms(
        counterparty=counterparty,
        give_cash=give_cash,
        give_squares=list(give_squares),
        take_cash=take_cash,
        take_squares=list(take_squares),
        give_cards=list(give_cards),
        take_cards=list(take_cards),
    )
    request = trade_pb2.ProposeTradeRequest(
        table_id=table_id, seat=seat, seat_token=token, terms=terms, request_id=request_id or uuid.uuid4().hex
    )
    view: trade_pb2.TradeView = await stub.ProposeTrade(request, timeout=timeout)
    return view


def _action(table_id: str, trade_id: int, seat: int, token: str) -> trade_pb2.TradeActionRequest:
    return trade_pb2.TradeActionRequest(table_id=table_id, trade_id=trade_id, seat=seat, seat_token=token)


async def accept(
    stub: trade_pb2_grpc.TradeServiceStub, table_id: str, trade_id: int, seat: int, token: str, timeout: float = 10.0
) -> trade_pb2.TradeView:
    """The counterparty accepts: status "executed", or FAILED_PRECONDITION "stale trade: ..."."""
    view: trade_pb2.TradeView = await stub.AcceptTrade(_action(table_id, trade_id, seat, token), timeout=timeout)
    return view


async def decline(
    stub: trade_pb2_grpc.TradeServiceStub, table_id: str, trade_id: int, seat: int, token: str, timeout: float = 10.0
) -> trade_pb2.TradeView:
    view: trade_pb2.TradeView = await stub.DeclineTrade(_action(table_id, trade_id, seat, token), timeout=timeout)
    return view


async def cancel(
    stub: trade_pb2_grpc.TradeServiceStub, table_id: str, trade_id: int, seat: int, token: str, timeout: float = 10.0
) -> trade_pb2.TradeView:
    """The proposer withdraws an open proposal."""
    view: trade_pb2.TradeView = await stub.CancelTrade(_action(table_id, trade_id, seat, token), timeout=timeout)
    return view


async def trades(
    stub: trade_pb2_grpc.TradeServiceStub, table_id: str, open_only: bool = False, timeout: float = 10.0
) -> list[trade_pb2.TradeView]:
    reply = await stub.ListTrades(trade_pb2.ListTradesRequest(table_id=table_id, open_only=open_only), timeout=timeout)
    return list(reply.trades)


async def open_for(
    stub: trade_pb2_grpc.TradeServiceStub, table_id: str, seat: int, timeout: float = 10.0
) -> list[trade_pb2.TradeView]:
    """The open proposals addressed to `seat`, oldest first."""
    return [t for t in await trades(stub, table_id, True, timeout) if t.terms.counterparty == seat]


__all__ = ["accept", "cancel", "connect_trade", "decline", "open_for", "propose", "rule_of", "trades"]
