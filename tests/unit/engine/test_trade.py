"""T1-T5: trades (online rule set, Classic mode)."""

from __future__ import annotations

import pytest

from engine import (
    AcceptTrade,
    Bid,
    DeclineProperty,
    DeclineTrade,
    EndTurn,
    LiftMortgage,
    Pay,
    Phase,
    ProposeTrade,
    Roll,
    RuleViolation,
    Scenario,
    TableState,
    TradeDeclined,
    TradeExecuted,
    TradeProposed,
    apply,
    legal_commands,
    preset,
)
from engine.codec import state_to_data
from engine.delegated import trade_window

from .helpers import Table, give, refused, roll_onto

START_CASH = 15000
VISITING = 10


# -- helpers -------------------------------------------------------------------


def table(players: int = 3) -> tuple[Table, int, int, int]:
    """A table, the current player, the next player and the one after."""
    t = Table(players=players)
    order = t.state.order
    i = order.index(t.state.current)
    return t, order[i], order[(i + 1) % len(order)], order[(i + 2) % len(order)]


def propose_and_decline(t: Table, me: int, other: int) -> None:
    t.do(ProposeTrade(me, other, give_cash=1000, take_cash=1000))
    assert t.state.trade is not None
    t.do(DeclineTrade(other, t.state.trade.trade_id))


# -- T1: who proposes, when, how often ---------------------------------------------------


def test_T1_current_player_proposes_before_rolling() -> None:
    t, me, other, _ = table()
    give(t.state, other, 6)
    events = t.do(ProposeTrade(me, other, give_cash=1000, take_squares=(6,)))
    assert events == [TradeProposed(1, me, other, 1000, (), 0, (6,))]
    assert t.state.phase is Phase.TRADE
    assert t.state.actor == other
    assert t.state.proposals == 1
    assert legal_commands(t.state, other) == [AcceptTrade(other, 1), DeclineTrade(other, 1)]
    assert legal_commands(t.state, me) == []


def test_T1_only_the_player_whose_turn_it_is_proposes() -> None:
    t, me, other, third = table()
    give(t.state, me, 6)
    refused(t, ProposeTrade(other, me, give_cash=1000, take_squares=(6,)), "T1")
    refused(t, ProposeTrade(third, other, give_cash=1000, take_cash=1000), "T1")


def test_T1_propose_while_deciding_a_purchase() -> None:
    t, me, other, _ = table()
    give(t.state, other, 5)
    roll_onto(t, 6)
    assert t.state.phase is Phase.BUY
    t.do(ProposeTrade(me, other, give_cash=2000, take_squares=(5,)))
    t.do(AcceptTrade(other, 1))
    assert t.state.owner[5] == me
    assert t.state.phase is Phase.BUY and t.state.actor == me  # the purchase decision is still open
    assert t.state.offer == 6


def test_T1_propose_while_a_payment_is_pending() -> None:
    t, me, other, _ = table()
    give(t.state, other, 6, 5)
    roll_onto(t, 6)
    assert t.state.phase is Phase.PAYMENT and t.state.actor == me
    t.do(ProposeTrade(me, other, give_cash=2000, take_squares=(5,)))
    t.do(AcceptTrade(other, 1))
    assert t.state.owner[5] == me
    assert t.state.phase is Phase.PAYMENT and t.state.actor == me
    t.do(Pay(me))
    assert t.state.players[me].cash == START_CASH - 2000 - 60


def _birthday(cash_b: int) -> TableState:
    """A draws the birthday card (Chance 15): B and C each owe A $100, B first, outside B's turn."""
    deck = (15, *(i for i in range(20) if i != 15))
    owners = {"A": ["FreshMart"], "B": ["GrocerGo"]}
    scenario = Scenario(
        players=("A", "B", "C"), mode="classic", chance=deck, dice=((3, 4),), owners=owners, cash={"B": cash_b}
    )
    state = scenario.state()
    apply(state, Roll(0))
    assert state.phase is Phase.PAYMENT and state.actor == 1 and state.current == 0
    assert state.payments[0].amount == 100
    return state


def test_T1_a_debtor_outside_their_turn_proposes_only_in_debt_resolution() -> None:
    state = _birthday(15_000)  # B's cash covers the $100: B has only to pay
    before = state_to_data(state)
    with pytest.raises(RuleViolation) as info:
        apply(state, ProposeTrade(1, 2, give_cash=1000, take_cash=1000))
    assert info.value.rule == "T1" and state_to_data(state) == before
    with pytest.raises(RuleViolation) as info:
        trade_window(state, 1)  # the trade service's window says the same
    assert info.value.rule == "T1"

    state = _birthday(50)  # short of the $100: debt resolution (D1), a proposal may raise the cash
    trade_window(state, 1)
    grocer = next(sq.index for sq in state.config.board.squares if sq.name == "GrocerGo")
    events = apply(state, ProposeTrade(1, 2, give_squares=(grocer,), take_cash=500))
    assert isinstance(events[-1], TradeProposed) and state.phase is Phase.TRADE


def test_T1_propose_after_rolling_refused() -> None:
    t, me, other, _ = table()
    roll_onto(t, VISITING)
    assert t.state.phase is Phase.POST_ROLL
    refused(t, ProposeTrade(me, other, give_cash=1000, take_cash=1000), "T1")


def test_T1_propose_during_an_auction_refused() -> None:
    t, me, other, third = table()
    roll_onto(t, 6)
    t.do(DeclineProperty(me))
    assert t.state.phase is Phase.AUCTION and t.state.actor == other
    refused(t, ProposeTrade(me, other, give_cash=1000, take_cash=1000), "T1")
    refused(t, ProposeTrade(other, third, give_cash=1000, take_cash=1000), "T1")
    t.do(Bid(other, 1000))


def test_T1_at_most_three_proposals_per_turn() -> None:
    t, me, other, third = table()
    propose_and_decline(t, me, other)
    propose_and_decline(t, me, third)
    t.do(ProposeTrade(me, other, give_cash=1000, take_cash=1000))
    t.do(AcceptTrade(other, 3))  # accepted ones count too
    assert t.state.proposals == 3
    refused(t, ProposeTrade(me, other, give_cash=1000, take_cash=1000), "T1")
    refused(t, ProposeTrade(me, third, give_cash=500, take_cash=500), "T1")
    # the next player's turn has its own three
    roll_onto(t, VISITING)
    t.do(EndTurn(me))
    assert t.state.current == other and t.state.proposals == 0
    for _ in range(3):
        propose_and_decline(t, other, me)
    refused(t, ProposeTrade(other, me, give_cash=1000, take_cash=1000), "T1")


# -- T2: both sides, accept or decline ----------------------------------------------


def test_T2_money_and_properties_on_both_sides_accepted() -> None:
    t, me, other, third = table()
    give(t.state, me, 6, 12)
    give(t.state, other, 5, 39)
    cmd = ProposeTrade(me, other, give_cash=500, give_squares=(6, 12), take_cash=300, take_squares=(5,))
    t.do(cmd)
    assert t.state.owner[6] == me  # nothing moves before the answer
    events = t.do(AcceptTrade(other, 1))
    assert events == [TradeExecuted(1, me, other, 500, (6, 12), 300, (5,))]
    assert t.state.owner[6] == t.state.owner[12] == other
    assert t.state.owner[5] == me
    assert t.state.owner[39] == other
    assert t.state.players[me].cash == START_CASH - 500 + 300
    assert t.state.players[other].cash == START_CASH + 500 - 300
    assert t.state.players[third].cash == START_CASH
    assert t.state.trade is None
    assert t.state.phase is Phase.PRE_ROLL and t.state.actor == me


def test_T2_counterparty_declines() -> None:
    t, me, other, _ = table()
    give(t.state, me, 6)
    give(t.state, other, 8)
    t.do(ProposeTrade(me, other, give_squares=(6,), take_squares=(8,)))
    events = t.do(DeclineTrade(other, 1))
    assert events == [TradeDeclined(1, other)]
    assert t.state.owner[6] == me and t.state.owner[8] == other
    assert all(p.cash == START_CASH for p in t.state.players)
    assert t.state.trade is None
    assert t.state.phase is Phase.PRE_ROLL and t.state.actor == me


def test_T2_only_the_counterparty_answers_the_open_proposal() -> None:
    t, me, other, third = table()
    t.do(ProposeTrade(me, other, give_cash=1000, take_cash=1000))
    refused(t, AcceptTrade(me, 1), "T2")
    refused(t, AcceptTrade(third, 1), "T2")
    refused(t, DeclineTrade(me, 1), "T2")
    refused(t, AcceptTrade(other, 2), "T2")  # not the open proposal
    refused(t, Roll(me), "G2")  # the game waits for the answer
    refused(t, DeclineTrade(third, 1), "T2")


def test_T2_answer_without_a_proposal_refused() -> None:
    t, me, other, _ = table()
    refused(t, AcceptTrade(other, 1), "T2")
    refused(t, DeclineTrade(me, 1), "T2")


@pytest.mark.parametrize(
    "terms",
    [
        {"give_squares": (8,)},  # not the proposer's
        {"give_cash": 500, "take_squares": (6,)},  # not the counterparty's (the proposer's own)
        {"take_squares": (7,), "give_cash": 1},  # a chance square
        {"give_cash": 15001, "take_cash": 15000},  # more cash than the proposer has
        {"give_cash": 15000, "take_cash": 15001},  # more cash than the counterparty has
        {"give_cash": -100, "take_cash": 100},
        {},  # an empty trade
        {"give_squares": (6, 6), "take_cash": 1000},
    ],
)
def test_T2_malformed_terms_refused(terms: dict[str, object]) -> None:
    t, me, other, _ = table()
    give(t.state, me, 6)
    refused(t, ProposeTrade(me, other, **terms), "T2")  # type: ignore[arg-type]


@pytest.mark.parametrize("counterparty", ["1", None, [1], 1.0])
@pytest.mark.parametrize("mode", ["classic", "team"])
def test_T2_a_counterparty_that_is_not_a_seat_number_is_refused_in_every_mode(mode: str, counterparty: object) -> None:
    """X4's teammates test (`seat % 2`) must not see it first and crash."""
    t = Table(4, 1, preset(mode))
    refused(t, ProposeTrade(t.state.current, counterparty, give_cash=100), "T2")  # type: ignore[arg-type]


def test_T2_trade_with_oneself_refused() -> None:
    t, me, _, _ = table()
    refused(t, ProposeTrade(me, me, give_cash=100, take_cash=100), "T2")


# -- T3: no property of a group with buildings ------------------------------------------


def test_T3_property_of_a_group_with_buildings_refused() -> None:
    t, me, other, _ = table()
    give(t.state, other, 6, 8, 9)
    t.state.buildings[6] = 1
    # 9 has no building itself, but its group does
    refused(t, ProposeTrade(me, other, give_cash=1200, take_squares=(9,)), "T3")
    refused(t, ProposeTrade(me, other, give_cash=1000, take_squares=(6,)), "T3")
    give(t.state, me, 37, 39)
    t.state.buildings[37] = 1
    refused(t, ProposeTrade(me, other, give_squares=(39,), take_cash=4000), "T3")


def test_T3_groups_without_buildings_still_trade() -> None:
    t, me, other, _ = table()
    give(t.state, other, 6, 8, 9, 5)
    t.state.buildings[6] = t.state.buildings[8] = t.state.buildings[9] = 1
    t.do(ProposeTrade(me, other, give_cash=2000, take_squares=(5,)))  # a finance company: fine
    t.do(AcceptTrade(other, 1))
    assert t.state.owner[5] == me
    assert [t.state.buildings[sq] for sq in (6, 8, 9)] == [1, 1, 1]


# -- T4: no mortgaged properties (Classic) ----------------------------------------------


def test_T4_mortgaged_property_refused() -> None:
    t, me, other, _ = table()
    give(t.state, other, 6)
    give(t.state, me, 8)
    t.state.mortgaged_round[6] = 1
    t.state.mortgaged_round[8] = 1
    refused(t, ProposeTrade(me, other, give_cash=1000, take_squares=(6,)), "T4")
    refused(t, ProposeTrade(me, other, give_squares=(8,), take_cash=1000), "T4")


def test_T4_lifted_property_trades_again() -> None:
    t, me, other, _ = table()
    give(t.state, me, 8)
    t.state.mortgaged_round[8] = 1
    refused(t, ProposeTrade(me, other, give_squares=(8,), take_cash=1000), "T4")
    t.do(LiftMortgage(me, 8))
    t.do(ProposeTrade(me, other, give_squares=(8,), take_cash=1000))
    t.do(AcceptTrade(other, 1))
    assert t.state.owner[8] == other


# -- T5: balance -----------------------------------------------------------------------


def test_T5_unbalanced_trade_refused() -> None:
    t, me, other, _ = table()
    give(t.state, me, 6)
    give(t.state, other, 39)
    # 1,000 against 4,000
    err = refused(t, ProposeTrade(me, other, give_squares=(6,), take_squares=(39,)), "T5")
    assert "1000" in err.message and "4000" in err.message
    # the other way round: a gift is unbalanced too
    refused(t, ProposeTrade(me, other, give_squares=(6,)), "T5")
    refused(t, ProposeTrade(me, other, take_cash=1), "T5")
    # 1,000 + 900 cash = 1,900 against 4,000: still short
    refused(t, ProposeTrade(me, other, give_cash=900, give_squares=(6,), take_squares=(39,)), "T5")


def test_T5_exactly_half_is_balanced() -> None:
    t, me, other, _ = table()
    give(t.state, me, 6)
    give(t.state, other, 39)
    refused(t, ProposeTrade(me, other, give_cash=999, give_squares=(6,), take_squares=(39,)), "T5")
    t.do(ProposeTrade(me, other, give_cash=1000, give_squares=(6,), take_squares=(39,)))  # 2,000 vs 4,000
    t.do(AcceptTrade(other, 1))
    assert t.state.owner[39] == me and t.state.owner[6] == other
    assert t.state.players[me].cash == START_CASH - 1000
    assert t.state.players[other].cash == START_CASH + 1000


def test_T5_exactly_half_the_other_way_round() -> None:
    t, me, other, _ = table()
    give(t.state, me, 5)  # 2,000
    # the proposer's side is the larger: 2,000 against 1,000 cash
    refused(t, ProposeTrade(me, other, give_squares=(5,), take_cash=999), "T5")
    t.do(ProposeTrade(me, other, give_squares=(5,), take_cash=1000))
    t.do(AcceptTrade(other, 1))
    assert t.state.owner[5] == other
    assert t.state.players[me].cash == START_CASH + 1000


def test_T5_values_use_printed_prices_and_cash_on_both_sides() -> None:
    t, me, other, _ = table()
    give(t.state, me, 1, 3)  # 600 + 600
    give(t.state, other, 37)  # 3,500
    # 1,200 + 550 = 1,750 against 3,500: exactly half
    t.do(ProposeTrade(me, other, give_cash=550, give_squares=(1, 3), take_squares=(37,)))
    t.do(DeclineTrade(other, 1))
    # 1,200 + 500 = 1,700 against 3,500: short by 50
    refused(t, ProposeTrade(me, other, give_cash=500, give_squares=(1, 3), take_squares=(37,)), "T5")
    # cash on the larger side raises the bar: 1,750 against 3,500 + 100
    refused(t, ProposeTrade(me, other, give_cash=550, give_squares=(1, 3), take_cash=100, take_squares=(37,)), "T5")
