"""A1, A3: auctions of declined properties (online rule set, Classic mode)."""

from __future__ import annotations

from engine import (
    BANK,
    AuctionSettled,
    AuctionStarted,
    Bid,
    BidPassed,
    BidPlaced,
    DeclineProperty,
    EndTurn,
    Event,
    Mortgage,
    PassBid,
    Pay,
    PaymentDue,
    PaymentMade,
    Phase,
    Roll,
    Surrender,
    legal_commands,
)

from .helpers import Table, force_dice, give, place, refused, set_cash

START_CASH = 15000
SQUARE = 6  # price 1,000, mortgage value 500


# -- helpers -------------------------------------------------------------------


def declined(players: int = 4, square: int = SQUARE) -> tuple[Table, int, list[int]]:
    """The first player lands on `square` and declines it: the table, the decliner, the others in order."""
    t = Table(players=players)
    me = t.state.current
    place(t.state, me, square - 3)
    force_dice(t.state, 1, 2)
    t.do(Roll(me))
    t.do(DeclineProperty(me))
    order = t.state.order
    i = order.index(me)
    return t, me, order[i + 1 :] + order[:i]


def of(events: list[Event], cls: type) -> list[Event]:
    return [e for e in events if isinstance(e, cls)]


# -- A1 ------------------------------------------------------------------------------


def test_A1_decliner_does_not_bid_and_the_others_bid_in_seat_order() -> None:
    t, me, others = declined()
    started = t.events[-1]
    assert isinstance(started, AuctionStarted)
    assert started.bidders == tuple(others)
    assert me not in started.bidders
    assert started.start_price == 1000 and started.increment == 100
    assert t.state.phase is Phase.AUCTION
    assert t.state.actor == others[0]
    refused(t, Bid(me, 1000), "A1")  # the decliner
    refused(t, PassBid(me), "A1")
    assert legal_commands(t.state, me) == []
    # each in turn
    for seat, amount in zip(others, (1000, 1100, 1200), strict=True):
        assert t.state.actor == seat
        t.do(Bid(seat, amount))
    assert t.state.actor == others[0]
    refused(t, Bid(me, 1300), "A1")  # still never the decliner's turn


def test_A1_bids_start_at_the_printed_price() -> None:
    t, _, others = declined(square=39)
    first = others[0]
    assert legal_commands(t.state, first) == [Bid(first, 4000), PassBid(first)]
    refused(t, Bid(first, 3999), "A1")
    refused(t, Bid(first, 0), "A1")
    events = t.do(Bid(first, 4000))
    assert events == [BidPlaced(t.state.auction.auction_id, first, 4000)]  # type: ignore[union-attr]


def test_A1_each_bid_at_least_100_above_the_last() -> None:
    t, _, (a, b, c) = declined()
    t.do(Bid(a, 1000))
    refused(t, Bid(b, 1000), "A1")
    refused(t, Bid(b, 1099), "A1")
    t.do(Bid(b, 1100))
    assert legal_commands(t.state, c) == [Bid(c, 1200), PassBid(c)]
    refused(t, Bid(c, 1150), "A1")
    t.do(Bid(c, 1750))  # any amount at least $100 above
    refused(t, Bid(a, 1849), "A1")
    t.do(Bid(a, 1850))
    assert t.state.auction is not None
    assert (t.state.auction.high_bid, t.state.auction.high_bidder) == (1850, a)


def test_A1_out_of_turn_bid_refused() -> None:
    t, _, (a, b, c) = declined()
    refused(t, Bid(b, 1000), "A1")
    refused(t, PassBid(c), "A1")
    assert legal_commands(t.state, b) == []
    t.do(Bid(a, 1000))
    refused(t, Bid(a, 1100), "A1")  # not twice in a row
    refused(t, Bid(c, 1100), "A1")


def test_A1_bid_outside_an_auction_refused() -> None:
    t = Table()
    me = t.state.current
    refused(t, Bid(me, 1000), "A1")
    refused(t, PassBid(me), "A1")


def test_A1_pass_drops_the_player_out() -> None:
    t, _, (a, b, c) = declined()
    events = t.do(PassBid(a))
    assert t.types(events) == ["BidPassed"]
    t.do(Bid(b, 1000))
    t.do(Bid(c, 1100))
    assert t.state.actor == b  # a passed: skipped
    t.do(Bid(b, 1200))
    assert t.state.actor == c
    refused(t, Bid(a, 1300), "A1")
    events = t.do(PassBid(c))
    assert t.types(events) == ["BidPassed", "AuctionSettled", "PaymentDue"]
    assert of(events, AuctionSettled)[0].winner == b  # type: ignore[attr-defined]


def test_A1_highest_bidder_wins_and_pays_the_bank() -> None:
    t, me, (a, b, c) = declined()
    auction_id = t.state.auction.auction_id  # type: ignore[union-attr]
    t.do(Bid(a, 1000))
    t.do(Bid(b, 1100))
    t.do(PassBid(c))
    t.do(Bid(a, 1500))
    events = t.do(PassBid(b))
    assert events == [
        BidPassed(auction_id, b),
        AuctionSettled(auction_id, SQUARE, a, 1500),
        PaymentDue(a, BANK, 1500, "auction", square=SQUARE),
    ]
    assert t.state.auction is None
    assert t.state.owner[SQUARE] == a
    assert t.state.phase is Phase.PAYMENT and t.state.actor == a
    bank_in = t.state.bank_in
    events = t.do(Pay(a))
    assert events == [PaymentMade(a, BANK, 1500, "auction", square=SQUARE)]
    assert t.state.bank_in == bank_in + 1500
    assert t.state.players[a].cash == START_CASH - 1500
    for seat in (me, b, c):
        assert t.state.players[seat].cash == START_CASH
    # back to the decliner's turn, after rolling
    assert t.state.phase is Phase.POST_ROLL and t.state.actor == me
    t.do(EndTurn(me))


def test_A1_auction_closes_when_all_others_have_passed_after_a_bid() -> None:
    t, _, (a, b, c) = declined()
    t.do(PassBid(a))
    t.do(PassBid(b))
    events = t.do(Bid(c, 1000))  # the last one left bids: no one to outbid
    assert t.types(events) == ["BidPlaced", "AuctionSettled", "PaymentDue"]
    assert t.state.owner[SQUARE] == c


def test_A1_no_bid_leaves_the_property_unowned() -> None:
    t, me, (a, b, c) = declined()
    auction_id = t.state.auction.auction_id  # type: ignore[union-attr]
    t.do(PassBid(a))
    t.do(PassBid(b))
    events = t.do(PassBid(c))
    assert events == [BidPassed(auction_id, c), AuctionSettled(auction_id, SQUARE, BANK, 0)]
    assert t.state.owner[SQUARE] == BANK
    assert t.state.auction is None
    assert all(p.cash == START_CASH for p in t.state.players)
    assert t.state.bank_in == 0
    assert t.state.phase is Phase.POST_ROLL and t.state.actor == me


def test_A1_two_players_the_only_bidder_wins_at_the_price() -> None:
    t, me, (other,) = declined(players=2)
    started = t.events[-1]
    assert isinstance(started, AuctionStarted) and started.bidders == (other,)
    events = t.do(Bid(other, 1000))
    assert t.types(events) == ["BidPlaced", "AuctionSettled", "PaymentDue"]
    t.do(Pay(other))
    assert t.state.owner[SQUARE] == other
    assert t.state.players[other].cash == START_CASH - 1000
    assert t.state.players[me].cash == START_CASH


# -- A3 ------------------------------------------------------------------------------


def test_A3_winning_bid_above_cash_opens_debt_resolution() -> None:
    t, me, (a, b, c) = declined()
    give(t.state, a, 39)  # mortgage value 2,000
    set_cash(t, a, 500)
    t.do(Bid(a, 1000))
    t.do(PassBid(b))
    events = t.do(PassBid(c))
    assert of(events, PaymentDue) == [PaymentDue(a, BANK, 1000, "auction", square=SQUARE)]
    assert t.state.owner[SQUARE] == a
    assert t.state.phase is Phase.PAYMENT
    assert t.state.actor == a
    refused(t, Pay(a), "D1")  # 500 in hand: sell, mortgage, trade or surrender first
    refused(t, EndTurn(me), "G2")
    t.do(Mortgage(a, 39))
    t.do(Pay(a))
    assert t.state.players[a].cash == 500 + 2000 - 1000
    assert t.state.owner[SQUARE] == a
    assert t.state.phase is Phase.POST_ROLL and t.state.actor == me


def test_A3_bid_beyond_what_the_bidder_could_raise_refused() -> None:
    t, _, (a, b, c) = declined()
    give(t.state, a, 39)
    set_cash(t, a, 500)
    # cash 500 + mortgage of Quantix 2,000 + mortgage of the won square 500
    limit = 3000
    err = refused(t, Bid(a, limit + 1), "A3")
    assert "3000" in err.message
    refused(t, Bid(a, 10000), "A3")
    t.do(Bid(a, limit))  # exactly everything: allowed
    t.do(PassBid(b))
    t.do(PassBid(c))
    assert [(p.debtor, p.creditor, p.amount) for p in t.state.payments] == [(a, BANK, 3000)]
    t.do(Mortgage(a, 39))
    t.do(Mortgage(a, SQUARE))
    t.do(Pay(a))
    assert t.state.players[a].cash == 0
    assert t.state.owner[SQUARE] == a and t.state.mortgaged_round[SQUARE] >= 0


def test_A3_limit_counts_buildings_at_their_sale_value() -> None:
    t, _, (a, _b, _c) = declined()
    give(t.state, a, 37, 39)
    t.state.buildings[37] = t.state.buildings[39] = 1
    set_cash(t, a, 0)
    # 2 buildings x 2,000 + mortgages 1,750 + 2,000 + the won square 500
    limit = 4000 + 3750 + 500
    refused(t, Bid(a, limit + 1), "A3")
    t.do(Bid(a, limit))


def test_A1_bidder_bankrupt_during_a_running_auction_is_no_longer_asked_to_bid() -> None:
    """Two mortgages expire at once (M3): the winner of the first auction surrenders while
    owing its price; the second auction must go on among the players still in the game."""
    t = Table(players=3)
    first, second, owner = t.state.order
    give(t.state, owner, 5, 6)
    t.state.mortgaged_round[5] = t.state.mortgaged_round[6] = 1
    t.state.round = 8
    for seat in (first, second):
        place(t.state, seat, 7)
        force_dice(t.state, 1, 2)
        t.do(Roll(seat))
        t.do(EndTurn(seat))
    assert t.state.auction is not None and t.state.auction.square == 5
    assert t.state.auction.bidders == [first, second, owner]
    t.do(Bid(first, 2000))
    t.do(PassBid(second))
    t.do(PassBid(owner))
    assert t.state.auction is not None and t.state.auction.square == 6  # the second expired mortgage
    assert t.state.actor == first  # owes 2,000 for the first auction
    t.do(Surrender(first))
    assert t.state.players[first].bankrupt
    assert t.state.phase is Phase.AUCTION
    assert t.state.actor != first, "a bankrupt player is asked to bid"
    assert legal_commands(t.state, first) == []
