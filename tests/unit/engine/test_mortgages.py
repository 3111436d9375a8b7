"""M1-M3: mortgages (online rule set, Classic mode)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from engine import (
    BANK,
    AcceptTrade,
    AuctionMortgaged,
    AuctionSettled,
    AuctionStarted,
    Bid,
    Build,
    ConfirmBack,
    EndTurn,
    Event,
    LiftMortgage,
    Mortgage,
    MortgageExpired,
    MortgageLifted,
    PassBid,
    Pay,
    PaymentDue,
    PaymentMade,
    Phase,
    PropertyMortgaged,
    ProposeTrade,
    RequestPause,
    SellBuilding,
    SettleAuction,
    Tick,
    VotePause,
    classic,
    legal_commands,
    preset,
)

from .helpers import Table, give, refused, roll_onto

START_CASH = 15000
VISITING = 10


# -- helpers -------------------------------------------------------------------


def pass_turn(t: Table) -> list[Event]:
    """The current player rolls onto 'just visiting' and ends the turn; the events of the end."""
    seat = t.state.current
    roll_onto(t, VISITING)
    return t.do(EndTurn(seat))


def of(events: list[Event], cls: type) -> list[Event]:
    return [e for e in events if isinstance(e, cls)]


def next_seat(t: Table) -> int:
    order = t.state.order
    return order[(order.index(t.state.current) + 1) % len(order)]


# -- M1: mortgage value, no buildings in the group ----------------------------------


@pytest.mark.parametrize(("square", "value"), [(6, 500), (39, 2000), (5, 1000), (12, 750), (1, 300)])
def test_M1_mortgage_gives_half_the_price(square: int, value: int) -> None:
    t = Table()
    me = t.state.current
    give(t.state, me, square)
    events = t.do(Mortgage(me, square))
    assert events == [PropertyMortgaged(me, square, value)]
    assert t.state.mortgaged_round[square] == t.state.round == 1
    assert t.state.owner[square] == me
    assert t.state.players[me].cash == START_CASH + value
    assert t.state.bank_out == value


def test_M1_mortgage_allowed_after_rolling_and_while_paying() -> None:
    t = Table()
    me = t.state.current
    owner = next_seat(t)
    give(t.state, me, 6, 8)
    give(t.state, owner, 21, 23, 24)
    for sq in (21, 23, 24):
        t.state.buildings[sq] = 3
    t.state.players[me].cash = 7000
    t.state.bank_in += START_CASH - 7000
    roll_onto(t, 21)
    assert t.state.phase is Phase.PAYMENT  # 7,000 rent due with 7,000 in hand: fine, but mortgage first
    t.do(Mortgage(me, 6))
    t.do(Pay(me))
    assert t.state.phase is Phase.POST_ROLL
    t.do(Mortgage(me, 8))
    assert t.state.players[me].cash == 1000
    assert t.state.mortgaged_round[6] == t.state.mortgaged_round[8] == 1


def test_M1_mortgage_refused_with_buildings_in_the_group() -> None:
    t = Table()
    me = t.state.current
    give(t.state, me, 6, 8, 9)
    t.state.buildings[6] = 1
    t.state.buildings[8] = 1
    refused(t, Mortgage(me, 9), "M1")  # 9 itself has none, its group does
    refused(t, Mortgage(me, 6), "M1")
    assert Mortgage(me, 9) not in legal_commands(t.state, me)
    t.do(SellBuilding(me, 6))
    refused(t, Mortgage(me, 9), "M1")
    t.do(SellBuilding(me, 8))
    events = t.do(Mortgage(me, 9))
    assert events == [PropertyMortgaged(me, 9, 600)]
    assert t.state.players[me].cash == START_CASH + 500 + 500 + 600


def test_M1_buildings_elsewhere_do_not_block_a_mortgage() -> None:
    t = Table()
    me = t.state.current
    give(t.state, me, 6, 8, 9, 5, 11)
    for sq in (6, 8, 9):
        t.state.buildings[sq] = 2
    t.do(Mortgage(me, 5))
    t.do(Mortgage(me, 11))
    assert t.state.mortgaged_round[5] == t.state.mortgaged_round[11] == 1


def test_M1_mortgage_refused_for_what_one_does_not_own_or_twice() -> None:
    t = Table()
    me = t.state.current
    other = next_seat(t)
    give(t.state, other, 6)
    refused(t, Mortgage(me, 6), "M1")  # not the owner
    refused(t, Mortgage(me, 8), "M1")  # the bank's
    refused(t, Mortgage(me, 7), "M1")  # a chance square
    give(t.state, other, 8)
    refused(t, Mortgage(other, 8), "G2")  # owner, but out of turn: the turn rule
    give(t.state, me, 9)
    t.do(Mortgage(me, 9))
    refused(t, Mortgage(me, 9), "M1")  # already mortgaged


# -- M2: lifting costs 60% of the price ------------------------------------------------


@pytest.mark.parametrize(("square", "cost"), [(6, 600), (39, 2400), (5, 1200), (12, 900), (1, 360)])
def test_M2_lifting_costs_60_percent_of_the_price(square: int, cost: int) -> None:
    t = Table()
    me = t.state.current
    give(t.state, me, square)
    t.state.mortgaged_round[square] = 1
    events = t.do(LiftMortgage(me, square))
    assert events == [MortgageLifted(me, square, cost)]
    assert t.state.mortgaged_round[square] == -1
    assert t.state.players[me].cash == START_CASH - cost
    assert t.state.bank_in == cost


def test_M2_mortgage_and_lift_cost_ten_percent_of_the_price_overall() -> None:
    t = Table()
    me = t.state.current
    give(t.state, me, 6, 8, 9)
    t.do(Mortgage(me, 9))
    refused(t, Build(me, 6), "P5")
    t.do(LiftMortgage(me, 9))
    assert t.state.players[me].cash == START_CASH - 120
    t.do(Build(me, 6))  # the group is whole and unmortgaged again
    assert t.state.buildings[6] == 1


def test_M2_lift_refused_without_cash_or_mortgage_or_ownership() -> None:
    t = Table()
    me = t.state.current
    other = next_seat(t)
    give(t.state, me, 39, 6)
    t.state.mortgaged_round[39] = 1
    refused(t, LiftMortgage(me, 6), "M2")  # not mortgaged
    t.state.players[me].cash = 2399
    t.state.bank_in += START_CASH - 2399
    refused(t, LiftMortgage(me, 39), "M2")  # costs 2,400
    give(t.state, other, 8)
    t.state.mortgaged_round[8] = 1
    refused(t, LiftMortgage(me, 8), "M2")  # not the owner
    refused(t, LiftMortgage(other, 8), "G2")  # out of turn: the turn rule


# -- M3: lost to an auction after 7 rounds ---------------------------------------------


def mortgaged_in_round_one(players: int = 3) -> tuple[Table, int]:
    """A table whose first player mortgages square 6 (price 1,000) in round 1."""
    t = Table(players=players)
    me = t.state.current
    give(t.state, me, 6)
    t.do(Mortgage(me, 6))
    assert t.state.mortgaged_round[6] == 1
    return t, me


def play_until_turn_of(t: Table, seat: int, round_no: int) -> list[Event]:
    """End turns until `seat`'s turn of `round_no` starts; the events of that last end of turn."""
    events: list[Event] = []
    while not (t.state.current == seat and t.state.round == round_no):
        assert t.state.auction is None, "an auction opened too early"
        events = pass_turn(t)
    return events


def test_M3_mortgage_kept_for_seven_rounds() -> None:
    t, me = mortgaged_in_round_one()
    events = play_until_turn_of(t, me, 7)
    assert not of(events, MortgageExpired)
    assert t.state.owner[6] == me
    assert t.state.mortgaged_round[6] == 1
    assert t.state.phase is Phase.PRE_ROLL


def test_M3_mortgage_not_lifted_within_7_rounds_goes_to_auction_at_full_price() -> None:
    t, me = mortgaged_in_round_one()
    play_until_turn_of(t, me, 7)
    pass_turn(t)  # round 7 of me
    others = [s for s in t.state.order if s != me]
    pass_turn(t)
    events = pass_turn(t)  # the last turn of round 7 ends: round 8 starts with me
    assert t.state.current == me and t.state.round == 8
    assert t.types(events)[-3:] == ["TurnStarted", "MortgageExpired", "AuctionStarted"]
    assert of(events, MortgageExpired) == [MortgageExpired(me, 6)]
    (started,) = of(events, AuctionStarted)
    assert isinstance(started, AuctionStarted)
    assert started.square == 6
    assert started.reason == "mortgage_expired"
    assert started.start_price == 1000  # the full price
    assert me in started.bidders  # the former owner may bid
    order = t.state.order
    i = order.index(me)
    assert list(started.bidders) == order[i + 1 :] + order[: i + 1]
    assert sorted(others) == sorted(s for s in started.bidders if s != me)
    assert t.state.owner[6] == BANK
    assert t.state.mortgaged_round[6] == -1
    assert t.state.phase is Phase.AUCTION


def test_M3_former_owner_may_win_the_auction_and_pays_the_bank() -> None:
    t, me = mortgaged_in_round_one()
    play_until_turn_of(t, me, 8)
    a, b, _ = t.state.auction.bidders  # type: ignore[union-attr]
    assert t.state.players[me].cash == START_CASH + 500
    refused(t, Bid(a, 900), "A1")  # below the full price
    t.do(Bid(a, 1000))
    t.do(PassBid(b))
    t.do(Bid(me, 1100))
    events = t.do(PassBid(a))
    assert of(events, AuctionSettled)[0] == AuctionSettled(started_id(t), 6, me, 1100)
    assert of(events, PaymentDue) == [PaymentDue(me, BANK, 1100, "auction", square=6)]
    bank_in = t.state.bank_in
    events = t.do(Pay(me))
    assert events == [PaymentMade(me, BANK, 1100, "auction", square=6)]
    assert t.state.bank_in == bank_in + 1100
    assert t.state.owner[6] == me
    assert t.state.mortgaged_round[6] == -1  # bought back unmortgaged
    assert t.state.players[me].cash == START_CASH + 500 - 1100
    assert t.state.players[a].cash == t.state.players[b].cash == START_CASH
    assert t.state.phase is Phase.PRE_ROLL and t.state.actor == me  # the owner's turn goes on


def test_M3_proceeds_go_to_the_bank_not_the_former_owner() -> None:
    t, me = mortgaged_in_round_one()
    play_until_turn_of(t, me, 8)
    a, b, _ = t.state.auction.bidders  # type: ignore[union-attr]
    t.do(PassBid(a))
    t.do(Bid(b, 1500))
    events = t.do(PassBid(me))
    assert of(events, PaymentDue) == [PaymentDue(b, BANK, 1500, "auction", square=6)]
    assert t.state.actor == b
    t.do(Pay(b))
    assert t.state.owner[6] == b
    assert t.state.mortgaged_round[6] == -1
    assert t.state.players[b].cash == START_CASH - 1500
    assert t.state.players[me].cash == START_CASH + 500  # only the mortgage money, nothing from the sale
    assert t.state.players[a].cash == START_CASH


def test_M3_no_bid_leaves_the_property_with_the_bank() -> None:
    t, me = mortgaged_in_round_one()
    play_until_turn_of(t, me, 8)
    for seat in list(t.state.auction.bidders):  # type: ignore[union-attr]
        events = t.do(PassBid(seat))
    assert of(events, AuctionSettled)[0].winner == BANK  # type: ignore[attr-defined]
    assert t.state.owner[6] == BANK
    assert t.state.mortgaged_round[6] == -1
    assert t.state.players[me].cash == START_CASH + 500
    assert t.state.phase is Phase.PRE_ROLL and t.state.actor == me


def test_M3_lifted_mortgage_is_not_lost() -> None:
    t, me = mortgaged_in_round_one()
    play_until_turn_of(t, me, 7)
    t.do(LiftMortgage(me, 6))
    play_until_turn_of(t, me, 9)
    assert t.state.owner[6] == me
    assert t.state.mortgaged_round[6] == -1
    assert not any(isinstance(e, MortgageExpired) for e in t.events)


def test_M3_expiry_counts_from_the_round_of_the_mortgage() -> None:
    """Set-up by hand: a mortgage of round 3 is kept at the owner's turn of round 9, lost at round 10."""
    t = Table(players=2)
    first = t.state.current
    owner = next_seat(t)  # plays second in each round
    give(t.state, owner, 39, 6)
    t.state.mortgaged_round[39] = 3
    t.state.mortgaged_round[6] = 4
    t.state.round = 9
    events = pass_turn(t)
    assert t.state.current == owner and t.state.round == 9
    assert not of(events, MortgageExpired)
    events = pass_turn(t)
    assert t.state.current == first and t.state.round == 10
    assert not of(events, MortgageExpired)  # only the owner's own turn start checks
    events = pass_turn(t)
    assert t.state.current == owner and t.state.round == 10
    assert of(events, MortgageExpired) == [MortgageExpired(owner, 39)]
    assert t.state.owner[6] == owner and t.state.mortgaged_round[6] == 4
    (started,) = of(events, AuctionStarted)
    assert started.start_price == 4000  # type: ignore[attr-defined]
    assert list(started.bidders) == [first, owner]  # type: ignore[attr-defined]


def started_id(t: Table) -> int:
    return next(e.auction_id for e in reversed(t.events) if isinstance(e, AuctionStarted))


def test_M3_several_expired_mortgages_are_auctioned_one_after_another() -> None:
    t = Table(players=2)
    first = t.state.current
    owner = next_seat(t)
    give(t.state, owner, 6, 5)
    t.state.mortgaged_round[5] = 1
    t.state.mortgaged_round[6] = 1
    t.state.round = 8
    events = pass_turn(t)
    assert of(events, MortgageExpired) == [MortgageExpired(owner, 5)]
    assert t.state.auction is not None and t.state.auction.square == 5
    assert t.state.owner[6] == owner  # the second waits for the first auction
    t.do(Bid(first, 2000))
    events = t.do(PassBid(owner))
    assert t.types(events) == ["BidPassed", "AuctionSettled", "PaymentDue", "MortgageExpired", "AuctionStarted"]
    assert t.state.auction is not None and t.state.auction.square == 6
    assert t.state.auction.start_price == 1000
    assert t.state.phase is Phase.PAYMENT and t.state.actor == first  # the won bid is paid first
    t.do(Pay(first))
    assert t.state.phase is Phase.AUCTION
    t.do(PassBid(first))
    t.do(Bid(owner, 1000))
    assert t.state.owner[6] == owner and t.state.mortgaged_round[6] == -1
    t.do(Pay(owner))
    assert t.state.owner[5] == first
    assert t.state.players[first].cash == START_CASH - 2000
    assert t.state.players[owner].cash == START_CASH - 1000
    assert t.state.phase is Phase.PRE_ROLL and t.state.actor == owner


def received_past_the_limit(t: Table, giver: int, square: int, give_cash: int = 10) -> int:
    """In round 8 the current player, whose turn began without an expired mortgage, takes `square` from
    `giver` by trade, mortgaged in round 1 (it keeps its M3 clock). Returns the receiver."""
    me = t.state.current
    t.state.round = 8
    give(t.state, giver, square)
    t.state.mortgaged_round[square] = 1
    t.do(ProposeTrade(me, giver, give_cash=give_cash, take_squares=(square,)))
    assert t.state.trade is not None
    t.do(AcceptTrade(giver, t.state.trade.trade_id))
    assert t.state.owner[square] == me and t.state.mortgaged_round[square] == 1
    return me


def test_M3_E5_a_mortgage_received_during_the_turn_is_not_lost_at_a_resume_but_at_its_owners_next_turn() -> None:
    """Team 2v2 (T4: teammates may trade a mortgaged square). The turn's expiry check ran at its start;
    a pause and resume in the same turn does not run it again."""
    t = Table(4, config=preset("team"))
    me = t.state.current
    mate = next(s for s in range(4) if s != me and s % 2 == me % 2)
    received_past_the_limit(t, mate, 1)
    t.do(RequestPause(me))
    for seat in t.state.active_seats:
        if seat != me:
            t.do(VotePause(seat, True))
    for seat in t.state.active_seats:
        t.do(ConfirmBack(seat))
    events = t.do(Tick(t.state.resume_at))
    assert "GameResumed" in t.types(events) and not of(events, MortgageExpired)
    assert t.state.owner[1] == me and t.state.auction is None and t.state.phase is Phase.PRE_ROLL
    for _ in range(3):
        assert not of(pass_turn(t), MortgageExpired)
    events = pass_turn(t)  # the next turn of its owner starts
    assert t.state.current == me and of(events, MortgageExpired) == [MortgageExpired(me, 1)]


def test_M3_X3_a_mortgage_received_during_the_turn_is_not_lost_when_an_auction_of_that_turn_ends() -> None:
    """Duel with mortgaged squares tradeable (a custom table): the owner's auction of another mortgaged
    square (X3) ends in the same pre-roll; the expiry check of the turn's start is not run again."""
    duel = preset("duel")
    t = Table(3, config=replace(duel, trade=replace(duel.trade, mortgaged_tradeable=True)))
    other = next_seat(t)
    me = received_past_the_limit(t, other, 1, give_cash=t.state.config.board.squares[1].price)
    give(t.state, me, 3)
    t.state.buildings[3] = 0
    t.state.mortgaged_round[3] = 8
    t.do(AuctionMortgaged(me, 3))
    events: list[Event] = []
    while t.state.auction is not None:
        events += t.do(PassBid(t.state.actor))
    assert of(events, AuctionSettled) and not of(events, MortgageExpired)
    assert t.state.owner[1] == me and t.state.phase is Phase.PRE_ROLL


def test_M3_E5_the_next_expired_mortgage_waits_for_the_resume_when_the_auction_service_settles_during_a_pause() -> None:
    """A result of the auction service is applied during a pause (R3's decision); the second expired
    mortgage's auction opens only once play resumes."""
    t = Table(players=2, config=classic().with_changes(external=("auction",)))
    owner = next_seat(t)
    give(t.state, owner, 6, 5)
    t.state.mortgaged_round[5] = t.state.mortgaged_round[6] = 1
    t.state.round = 8
    pass_turn(t)
    started = t.state.auction
    assert started is not None and started.square == 5
    t.do(RequestPause(owner))
    t.do(VotePause(next(s for s in t.state.active_seats if s != owner), True))
    assert t.state.paused
    events = t.do(SettleAuction(BANK, started.auction_id, BANK, 0))
    assert of(events, AuctionSettled) and not of(events, MortgageExpired) and t.state.auction is None
    for seat in t.state.active_seats:
        t.do(ConfirmBack(seat))
    events = t.do(Tick(t.state.resume_at))
    assert t.types(events)[-3:] == ["GameResumed", "MortgageExpired", "AuctionStarted"]
    assert of(events, MortgageExpired) == [MortgageExpired(owner, 6)]
