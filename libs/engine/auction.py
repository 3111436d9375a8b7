"""The auction sub-protocol (A1-A3) as a pure state machine.

`start` opens an auction, `decide` turns a bid or a pass into events,
`evolve` applies them. The table embeds it (simulation) and the auction
service runs it on its own; both settle into the table with `AuctionSettled`.
"""

from __future__ import annotations

from dataclasses import dataclass

from mypy_extensions import mypyc_attr

from .commands import Command
from .config import added
from .errors import RuleViolation
from .events import Event
from .reasons import AuctionReason
from .state import BANK, AuctionState


@mypyc_attr(native_class=False)  # a command takes any value: the rules refuse wrong types
@dataclass(slots=True)
class Bid(Command):
    seat: int
    amount: int


@mypyc_attr(native_class=False)  # a command takes any value: the rules refuse wrong types
@dataclass(slots=True)
class PassBid(Command):
    seat: int


@mypyc_attr(native_class=False)  # a command takes any value: the rules refuse wrong types
@dataclass(slots=True)
class SettleAuction(Command):
    """An auction service's result (external auctions): sent by the platform, never by a player."""

    seat: int  # always BANK: the result is nobody's move
    auction_id: int
    winner: int
    price: int


@dataclass(slots=True)
class AuctionStarted(Event):
    auction_id: int
    square: int
    reason: AuctionReason
    bidders: tuple[int, ...]
    start_price: int
    increment: int
    seller: int = -1  # X3: the owner selling a mortgaged property; -1: the bank
    #: For an auction service (external auctions only): per bidder, the most they could pay
    #: (A3), and each bidder's time to bid in game ms (A1, E1).
    limits: tuple[int, ...] = ()
    bid_ms: int = 0
    #: The rule whose minimums and order the bids follow when it is not A1: "A2" (hasbro). Empty:
    #: A1, as on every auction before this field (so an online auction's event is unchanged).
    bid_rule: str = added("")


@dataclass(slots=True)
class AuctionLimitsChanged(Event):
    """A3 (external auctions): what the bidders could pay changed while the auction ran (a hasbro
    trade, a building bought or sold, a mortgage): the auction service holds bids to these from now."""

    auction_id: int
    limits: tuple[int, ...]


@dataclass(slots=True, init=False)  # its own `__init__`: see Event
class BidPlaced(Event):
    auction_id: int
    seat: int
    amount: int

    def __init__(self, auction_id: int, seat: int, amount: int) -> None:
        self.auction_id = auction_id
        self.seat = seat
        self.amount = amount


@dataclass(slots=True, init=False)  # its own `__init__`: see Event
class BidPassed(Event):
    auction_id: int
    seat: int

    def __init__(self, auction_id: int, seat: int) -> None:
        self.auction_id = auction_id
        self.seat = seat


@dataclass(slots=True)
class AuctionSettled(Event):
    """The result: `winner` (-1: no bid, the square stays with the bank) pays `price`."""

    auction_id: int
    square: int
    winner: int
    price: int


def open_auction(event: AuctionStarted) -> AuctionState:
    return AuctionState(
        auction_id=event.auction_id,
        square=event.square,
        reason=event.reason,
        bidders=list(event.bidders),
        out=[False] * len(event.bidders),
        turn=0,
        start_price=event.start_price,
        increment=event.increment,
        seller=event.seller,
        bid_rule=event.bid_rule or "A1",
        limits=tuple(event.limits),
    )


def check(auction: AuctionState, command: Command, limit: int) -> None:
    """Raise `RuleViolation` unless `command` is the current bidder's legal move.

    `limit` is the most the bidder could pay (A3: a won bid is a mandatory
    payment, so a bid beyond everything the bidder could raise is refused).
    """
    rule = auction.bid_rule  # A1 online, A2 hasbro
    if command.seat != auction.bidder:
        raise RuleViolation(rule, f"seat {auction.bidder} bids now, not seat {command.seat}")
    if isinstance(command, Bid):
        if type(command.amount) is not int:
            raise RuleViolation(rule, f"a bid is a whole number of dollars, not {command.amount!r}")
        if command.amount < auction.min_bid:
            raise RuleViolation(rule, f"the bid must be at least ${auction.min_bid}")
        if command.amount > limit:
            raise RuleViolation("A3", f"a bid of ${command.amount} exceeds the ${limit} the bidder could raise")
    elif not isinstance(command, PassBid):
        raise RuleViolation(rule, "an auction takes only a bid or a pass")


def decide(auction: AuctionState, command: Command, limit: int) -> list[Event]:
    """The events of a bid or pass: the move itself, then the settlement if it closes."""
    check(auction, command, limit)
    seat = command.seat
    if isinstance(command, Bid):
        move: Event = BidPlaced(auction.auction_id, seat, command.amount)
        high_bidder, high_bid = seat, command.amount
        out = auction.out
    else:
        move = BidPassed(auction.auction_id, seat)
        high_bidder, high_bid = auction.high_bidder, auction.high_bid
        out = list(auction.out)
        out[auction.turn] = True
    nxt = _next_turn(auction.bidders, out, auction.turn)
    if nxt < 0 or auction.bidders[nxt] == high_bidder:
        return [move, AuctionSettled(auction.auction_id, auction.square, high_bidder, high_bid)]
    return [move]


def evolve(auction: AuctionState, event: Event) -> None:
    """Apply a bid or a pass in place."""
    if isinstance(event, BidPlaced):
        auction.high_bid = event.amount
        auction.high_bidder = event.seat
    elif isinstance(event, BidPassed):
        auction.out[auction.turn] = True
    else:  # pragma: no cover - the table routes only these two here
        raise TypeError(f"not an auction move: {event!r}")
    nxt = _next_turn(auction.bidders, auction.out, auction.turn)
    if nxt >= 0:
        auction.turn = nxt


def withdraw(auction: AuctionState, seat: int) -> None:
    """Take a player who left the game out of the auction, in place.

    A withdrawn high bid is void: bidding goes on from the start price.
    """
    if seat not in auction.bidders:
        return
    i = auction.bidders.index(seat)
    auction.out[i] = True
    if auction.high_bidder == seat:
        auction.high_bidder = BANK
        auction.high_bid = 0
    if auction.turn == i:
        nxt = _next_turn(auction.bidders, auction.out, i)
        if nxt >= 0:
            auction.turn = nxt


def result_if_closed(auction: AuctionState) -> AuctionSettled | None:
    """The settlement when nobody but the high bidder is left to bid, else None."""
    live = [s for s, out in zip(auction.bidders, auction.out, strict=True) if not out]
    if not live or live == [auction.high_bidder]:
        return AuctionSettled(auction.auction_id, auction.square, auction.high_bidder, auction.high_bid)
    return None


def _next_turn(bidders: list[int], out: list[bool], turn: int) -> int:
    """A1: the next bidder in seat order who has not passed, or -1 if none."""
    n = len(bidders)
    for step in range(1, n + 1):
        i = (turn + step) % n
        if not out[i]:
            return i
    return -1


__all__ = [
    "BANK",
    "AuctionLimitsChanged",
    "AuctionSettled",
    "AuctionStarted",
    "Bid",
    "BidPassed",
    "BidPlaced",
    "PassBid",
    "SettleAuction",
    "check",
    "decide",
    "evolve",
    "open_auction",
]
