"""A1: which refused moves are the same call asked again (answered as the auction stands) and which
are new moves the rules refuse."""

from __future__ import annotations

from engine.auction import Bid, PassBid
from engine.reasons import AuctionReason
from engine.state import AuctionState
from services.auction.auctions import made_already


def auction(high_bidder: int = -1, high_bid: int = 0, out: tuple[bool, ...] = (False, False, False)) -> AuctionState:
    return AuctionState(
        1, 5, AuctionReason.DECLINED, [0, 1, 2], list(out), 0, 10, 10, high_bid=high_bid, high_bidder=high_bidder
    )


def test_A1_the_standing_high_bid_asked_again_is_made_already() -> None:
    assert made_already(auction(high_bidder=1, high_bid=120), Bid(1, 120))


def test_A1_another_amount_or_another_bidder_is_a_new_bid() -> None:
    state = auction(high_bidder=1, high_bid=120)
    assert not made_already(state, Bid(1, 130))
    assert not made_already(state, Bid(2, 120))
    assert not made_already(auction(), Bid(0, 0))  # no bid yet: nobody's bid stands


def test_A1_a_pass_of_a_bidder_out_is_made_already() -> None:
    state = auction(out=(False, True, False))
    assert made_already(state, PassBid(1))
    assert not made_already(state, PassBid(0))
    assert not made_already(state, PassBid(7))  # not a bidder
