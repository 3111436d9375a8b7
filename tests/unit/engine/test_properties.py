"""P1-P9: buying, rent, buildings (online rule set, Classic mode)."""

from __future__ import annotations

import pytest

from engine import (
    BANK,
    AuctionStarted,
    Build,
    BuildingBuilt,
    BuildingSold,
    BuyProperty,
    DeclineProperty,
    EndTurn,
    Event,
    Pay,
    PaymentDue,
    PaymentMade,
    Phase,
    PropertyBought,
    PurchaseDeclined,
    PurchaseOffered,
    SellBuilding,
    legal_commands,
    rent,
)

from .helpers import Table, give, refused, roll_onto

START_CASH = 15000
VISITING = 10  # just visiting the jail: a square with no effect
GROUP_COSTS = {1: 500, 2: 500, 3: 1000, 4: 1000, 5: 1500, 6: 1500, 7: 2000, 8: 2000}  # B2
RAILROADS = (5, 15, 25, 35)


# -- helpers -------------------------------------------------------------------


def pass_turn(t: Table) -> None:
    """The current player rolls onto 'just visiting' and ends the turn."""
    seat = t.state.current
    roll_onto(t, VISITING)
    t.do(EndTurn(seat))


def of(events: list[Event], cls: type) -> list[Event]:
    return [e for e in events if isinstance(e, cls)]


def next_seat(t: Table) -> int:
    order = t.state.order
    return order[(order.index(t.state.current) + 1) % len(order)]


# -- P1: buy or decline ----------------------------------------------------------


@pytest.mark.parametrize(("square", "price"), [(6, 1000), (39, 4000), (5, 2000), (12, 1500)])
def test_P1_buy_at_printed_price(square: int, price: int) -> None:
    t = Table()
    me = t.state.current
    events = roll_onto(t, square)
    assert of(events, PurchaseOffered) == [PurchaseOffered(me, square, price)]
    assert t.state.phase is Phase.BUY
    assert t.state.actor == me
    legal = legal_commands(t.state, me)
    assert BuyProperty(me) in legal and DeclineProperty(me) in legal

    events = t.do(BuyProperty(me))
    assert events == [PropertyBought(me, square, price)]
    assert t.state.owner[square] == me
    assert t.state.players[me].cash == START_CASH - price
    assert t.state.bank_in == price
    assert t.state.phase is Phase.POST_ROLL


def test_P1_decline_starts_an_auction_and_keeps_the_square_unowned() -> None:
    t = Table()
    me = t.state.current
    roll_onto(t, 6)
    events = t.do(DeclineProperty(me))
    assert t.types(events) == ["PurchaseDeclined", "AuctionStarted"]
    assert events[0] == PurchaseDeclined(me, 6)
    started = events[1]
    assert isinstance(started, AuctionStarted)
    assert started.square == 6 and started.reason == "declined" and started.start_price == 1000
    assert me not in started.bidders
    assert t.state.owner[6] == BANK
    assert t.state.players[me].cash == START_CASH
    assert t.state.phase is Phase.AUCTION
    assert t.state.actor == started.bidders[0]


def test_P1_buy_refused_without_the_cash() -> None:
    t = Table()
    me = t.state.current
    roll_onto(t, 39)
    t.state.players[me].cash = 3999
    t.state.bank_in += START_CASH - 3999  # keep the money ledger balanced after the hand edit
    refused(t, BuyProperty(me), "P1")
    assert BuyProperty(me) not in legal_commands(t.state, me)
    t.do(DeclineProperty(me))
    assert t.state.phase is Phase.AUCTION


def test_P1_buy_refused_out_of_turn_or_without_an_offer() -> None:
    t = Table()
    me = t.state.current
    other = next_seat(t)
    refused(t, BuyProperty(me), "P1")  # nothing offered before rolling
    refused(t, DeclineProperty(me), "P1")
    roll_onto(t, 6)
    refused(t, BuyProperty(other), "P1")
    refused(t, DeclineProperty(other), "P1")
    t.do(BuyProperty(me))
    refused(t, BuyProperty(me), "P1")  # the offer is gone once bought


def test_P1_owned_square_is_not_offered() -> None:
    t = Table()
    me = t.state.current
    give(t.state, me, 6)
    events = roll_onto(t, 6)
    assert not of(events, PurchaseOffered)
    assert t.state.offer == -1


# -- P2: rent ----------------------------------------------------------------------


def test_P2_rent_paid_to_the_owner() -> None:
    t = Table()
    me = t.state.current
    owner = next_seat(t)
    give(t.state, owner, 6)
    events = roll_onto(t, 6)
    assert of(events, PaymentDue) == [PaymentDue(me, owner, 60, "rent", square=6)]
    assert t.state.phase is Phase.PAYMENT
    assert t.state.actor == me
    refused(t, EndTurn(me), "G2")  # the rent must be paid first
    events = t.do(Pay(me))
    assert events == [PaymentMade(me, owner, 60, "rent", square=6)]
    assert t.state.players[me].cash == START_CASH - 60
    assert t.state.players[owner].cash == START_CASH + 60
    assert t.state.phase is Phase.POST_ROLL


def test_P2_no_rent_on_a_mortgaged_property() -> None:
    t = Table()
    me = t.state.current
    owner = next_seat(t)
    give(t.state, owner, 6, 8, 9)
    t.state.mortgaged_round[6] = 1
    events = roll_onto(t, 6)
    assert not of(events, PaymentDue)
    assert not of(events, PurchaseOffered)
    assert t.state.phase is Phase.POST_ROLL
    assert t.state.players[me].cash == START_CASH
    assert t.state.players[owner].cash == START_CASH


def test_P2_no_rent_to_oneself() -> None:
    t = Table()
    me = t.state.current
    give(t.state, me, 6, 8, 9)
    events = roll_onto(t, 6)
    assert not of(events, PaymentDue)
    assert t.state.phase is Phase.POST_ROLL
    assert t.state.players[me].cash == START_CASH


# -- P3: monopoly doubles the unbuilt rent -------------------------------------------


def test_P3_whole_group_doubles_unbuilt_rent() -> None:
    t = Table()
    me = t.state.current
    owner = next_seat(t)
    give(t.state, owner, 6, 8, 9)
    events = roll_onto(t, 9)
    assert of(events, PaymentDue) == [PaymentDue(me, owner, 160, "rent", square=9)]


def test_P3_partial_group_is_not_doubled() -> None:
    t = Table()
    me = t.state.current
    owner = next_seat(t)
    give(t.state, owner, 6, 8)
    events = roll_onto(t, 8)
    assert of(events, PaymentDue) == [PaymentDue(me, owner, 60, "rent", square=8)]


def test_P3_doubled_even_when_another_property_of_the_group_is_mortgaged() -> None:
    t = Table()
    me = t.state.current
    owner = next_seat(t)
    give(t.state, owner, 6, 8, 9)
    t.state.mortgaged_round[9] = 1
    events = roll_onto(t, 8)
    assert of(events, PaymentDue) == [PaymentDue(me, owner, 120, "rent", square=8)]
    t.do(Pay(me))
    assert t.state.players[owner].cash == START_CASH + 120


def test_P3_built_rent_is_the_printed_rent_not_doubled() -> None:
    t = Table()
    me = t.state.current
    owner = next_seat(t)
    give(t.state, owner, 6, 8, 9)
    t.state.buildings[6] = 2
    t.state.buildings[8] = 2
    t.state.buildings[9] = 1
    assert rent(t.state, 6) == 900
    assert rent(t.state, 9) == 400
    events = roll_onto(t, 6)
    assert of(events, PaymentDue) == [PaymentDue(me, owner, 900, "rent", square=6)]


# -- P4: finance companies and industries ------------------------------------------


@pytest.mark.parametrize(("count", "expected"), [(1, 250), (2, 500), (3, 1000), (4, 2000)])
def test_P4_finance_company_rent_by_count_owned(count: int, expected: int) -> None:
    t = Table()
    me = t.state.current
    owner = next_seat(t)
    give(t.state, owner, *RAILROADS[:count])
    events = roll_onto(t, 5)
    assert of(events, PaymentDue) == [PaymentDue(me, owner, expected, "rent", square=5)]
    t.do(Pay(me))
    assert t.state.players[owner].cash == START_CASH + expected


@pytest.mark.parametrize(
    ("owned", "d1", "d2", "expected"),
    [((12,), 3, 4, 7 * 40), ((12,), 6, 5, 11 * 40), ((12, 28), 3, 4, 7 * 100), ((12, 28), 2, 1, 3 * 100)],
)
def test_P4_industry_rent_is_dice_times_40_or_100(owned: tuple[int, ...], d1: int, d2: int, expected: int) -> None:
    t = Table()
    me = t.state.current
    owner = next_seat(t)
    give(t.state, owner, *owned)
    events = roll_onto(t, 12, d1, d2)
    assert of(events, PaymentDue) == [PaymentDue(me, owner, expected, "rent", square=12)]


# -- P5: build on a whole, unmortgaged group, at the group's cost ----------------------


@pytest.mark.parametrize("group", range(1, 9))
def test_P5_build_costs_the_groups_building_cost(group: int) -> None:
    t = Table()
    me = t.state.current
    members = t.state.config.board.members[group]
    give(t.state, me, *members)
    cost = GROUP_COSTS[group]
    events = t.do(Build(me, members[0]))
    assert events == [BuildingBuilt(me, members[0], 1, cost)]
    assert t.state.buildings[members[0]] == 1
    assert t.state.players[me].cash == START_CASH - cost
    assert t.state.bank_in == cost


def test_P5_build_refused_without_the_whole_group() -> None:
    t = Table()
    me = t.state.current
    give(t.state, me, 6, 8)
    refused(t, Build(me, 6), "P5")  # 9 is the bank's
    give(t.state, next_seat(t), 9)
    refused(t, Build(me, 6), "P5")  # 9 is another player's
    assert Build(me, 6) not in legal_commands(t.state, me)


def test_P5_build_refused_when_a_property_of_the_group_is_mortgaged() -> None:
    t = Table()
    me = t.state.current
    give(t.state, me, 6, 8, 9)
    t.state.mortgaged_round[9] = 1
    refused(t, Build(me, 6), "P5")
    refused(t, Build(me, 9), "P5")


def test_P5_build_refused_on_what_is_not_ones_own_street() -> None:
    t = Table()
    me = t.state.current
    give(t.state, next_seat(t), 6, 8, 9)
    refused(t, Build(me, 6), "P5")  # not the owner
    give(t.state, me, *RAILROADS, 12, 28)
    refused(t, Build(me, 5), "P5")  # finance companies take no buildings
    refused(t, Build(me, 12), "P5")  # nor industries
    refused(t, Build(me, 7), "P5")  # a chance square


def test_P5_build_refused_without_the_cash() -> None:
    t = Table()
    me = t.state.current
    give(t.state, me, 37, 39)
    t.state.players[me].cash = 1999
    t.state.bank_in += START_CASH - 1999
    refused(t, Build(me, 37), "P5")


# -- P6: even building and even selling ----------------------------------------------


def test_P6_uneven_build_refused() -> None:
    t = Table()
    me = t.state.current
    give(t.state, me, 6, 8, 9)
    t.state.buildings[6] = 1
    refused(t, Build(me, 6), "P6")
    assert Build(me, 6) not in legal_commands(t.state, me)
    events = t.do(Build(me, 8))
    assert events == [BuildingBuilt(me, 8, 1, 500)]


def test_P6_uneven_build_refused_at_higher_levels() -> None:
    t = Table()
    me = t.state.current
    give(t.state, me, 37, 39)
    t.state.buildings[37] = 3
    t.state.buildings[39] = 2
    refused(t, Build(me, 37), "P6")
    t.do(Build(me, 39))
    assert t.state.buildings[37] == t.state.buildings[39] == 3


def test_P6_uneven_sale_refused() -> None:
    t = Table()
    me = t.state.current
    give(t.state, me, 6, 8, 9)
    t.state.buildings[6] = 2
    t.state.buildings[8] = 1
    t.state.buildings[9] = 2
    refused(t, SellBuilding(me, 8), "P6")
    assert SellBuilding(me, 8) not in legal_commands(t.state, me)
    t.do(SellBuilding(me, 6))
    refused(t, SellBuilding(me, 8), "P6")  # 9 still has 2
    t.do(SellBuilding(me, 9))
    assert [t.state.buildings[sq] for sq in (6, 8, 9)] == [1, 1, 1]
    t.do(SellBuilding(me, 8))
    refused(t, SellBuilding(me, 8), "P8")  # nothing left to sell there
    assert [t.state.buildings[sq] for sq in (6, 8, 9)] == [1, 0, 1]


def test_P6_even_building_round_over_three_turns() -> None:
    t = Table(players=2)
    me = t.state.current
    give(t.state, me, 6, 8, 9)
    t.do(Build(me, 6))
    for built, nxt in ((6, 8), (8, 9)):
        pass_turn(t)
        pass_turn(t)
        assert t.state.current == me
        refused(t, Build(me, built), "P6")
        t.do(Build(me, nxt))
    assert [t.state.buildings[sq] for sq in (6, 8, 9)] == [1, 1, 1]
    assert t.state.players[me].cash == START_CASH - 3 * 500


# -- P7: hotel at level 5 for the same cost, no sixth --------------------------------


def test_P7_hotel_is_level_five_for_the_same_cost() -> None:
    t = Table()
    me = t.state.current
    give(t.state, me, 6, 8, 9)
    for sq in (6, 8, 9):
        t.state.buildings[sq] = 4
    events = t.do(Build(me, 9))
    assert events == [BuildingBuilt(me, 9, 5, 500)]
    assert t.state.buildings[9] == 5
    assert t.state.players[me].cash == START_CASH - 500
    assert rent(t.state, 9) == 6000


def test_P7_hotel_rent_is_paid() -> None:
    t = Table()
    me = t.state.current
    owner = next_seat(t)
    give(t.state, owner, 6, 8, 9)
    for sq in (6, 8, 9):
        t.state.buildings[sq] = 5
    events = roll_onto(t, 9)
    assert of(events, PaymentDue) == [PaymentDue(me, owner, 6000, "rent", square=9)]
    t.do(Pay(me))
    assert t.state.players[owner].cash == START_CASH + 6000


def test_P7_no_sixth_building() -> None:
    t = Table()
    me = t.state.current
    give(t.state, me, 37, 39)
    t.state.buildings[37] = 5
    t.state.buildings[39] = 5
    refused(t, Build(me, 37), "P7")
    refused(t, Build(me, 39), "P7")
    assert not [c for c in legal_commands(t.state, me) if isinstance(c, Build)]


# -- P8: online sale returns the full cost -------------------------------------------


@pytest.mark.parametrize(
    ("members", "level", "cost"), [((6, 8, 9), 1, 500), ((37, 39), 5, 2000), ((21, 23, 24), 3, 1500)]
)
def test_P8_sale_returns_the_full_building_cost(members: tuple[int, ...], level: int, cost: int) -> None:
    t = Table()
    me = t.state.current
    give(t.state, me, *members)
    for sq in members:
        t.state.buildings[sq] = level
    events = t.do(SellBuilding(me, members[0]))
    assert events == [BuildingSold(me, members[0], level - 1, cost)]
    assert t.state.buildings[members[0]] == level - 1
    assert t.state.players[me].cash == START_CASH + cost
    assert t.state.bank_out == cost


def test_P8_build_then_sell_is_free() -> None:
    t = Table()
    me = t.state.current
    give(t.state, me, 11, 13, 14)
    t.do(Build(me, 14))
    t.do(SellBuilding(me, 14))
    assert t.state.players[me].cash == START_CASH
    assert t.state.buildings[14] == 0


def test_P8_sale_raises_cash_for_a_pending_payment() -> None:
    t = Table()
    me = t.state.current
    owner = next_seat(t)
    give(t.state, me, 37, 39)
    t.state.buildings[37] = 1
    t.state.buildings[39] = 1
    give(t.state, owner, 21, 23, 24)
    for sq in (21, 23, 24):
        t.state.buildings[sq] = 2
    t.state.players[me].cash = 1000
    t.state.bank_in += START_CASH - 1000
    roll_onto(t, 24)
    assert [(p.debtor, p.creditor, p.amount, p.reason) for p in t.state.payments] == [(me, owner, 3000, "rent")]
    refused(t, Pay(me), "D1")
    t.do(SellBuilding(me, 37))
    assert t.state.players[me].cash == 3000
    t.do(Pay(me))
    assert t.state.players[me].cash == 0
    assert t.state.players[owner].cash == START_CASH + 3000


def test_P8_sale_refused_without_a_building_or_not_the_owner() -> None:
    t = Table()
    me = t.state.current
    other = next_seat(t)
    give(t.state, me, 6, 8, 9)
    refused(t, SellBuilding(me, 6), "P8")
    give(t.state, other, 37, 39)
    t.state.buildings[37] = 1
    t.state.buildings[39] = 1
    refused(t, SellBuilding(me, 37), "P8")
    refused(t, SellBuilding(other, 37), "G2")  # not the seat that acts now: the turn rule


# -- P9: before rolling, one build per colour group per turn --------------------------


def test_P9_build_after_rolling_refused() -> None:
    t = Table()
    me = t.state.current
    give(t.state, me, 6, 8, 9)
    roll_onto(t, VISITING)
    assert t.state.phase is Phase.POST_ROLL
    refused(t, Build(me, 6), "P9")
    assert Build(me, 6) not in legal_commands(t.state, me)


def test_P9_build_refused_while_deciding_a_purchase() -> None:
    t = Table()
    me = t.state.current
    give(t.state, me, 6, 8, 9)
    roll_onto(t, 11)
    assert t.state.phase is Phase.BUY
    refused(t, Build(me, 6), "P9")


def test_G2_build_out_of_turn_refused_by_the_turn_rule() -> None:
    t = Table()
    other = next_seat(t)
    give(t.state, other, 6, 8, 9)
    refused(t, Build(other, 6), "G2")  # not P9: the rule broken is whose turn it is


def test_P9_one_build_per_colour_group_per_turn() -> None:
    t = Table(players=2)
    me = t.state.current
    give(t.state, me, 6, 8, 9, 1, 3)
    t.do(Build(me, 6))
    refused(t, Build(me, 8), "P9")
    refused(t, Build(me, 9), "P9")
    events = t.do(Build(me, 1))  # another group: allowed
    assert events == [BuildingBuilt(me, 1, 1, 500)]
    refused(t, Build(me, 3), "P9")
    assert t.state.players[me].cash == START_CASH - 1000
    # the limit is per turn: the next turn allows a build in each group again
    pass_turn(t)
    pass_turn(t)
    assert t.state.current == me
    t.do(Build(me, 8))
    t.do(Build(me, 3))
    refused(t, Build(me, 9), "P9")
    assert [t.state.buildings[sq] for sq in (6, 8, 9, 1, 3)] == [1, 1, 0, 1, 1]
