"""The trade service's pure parts: T1's and T6's windows on an engine state, views, the table's refusals."""

from __future__ import annotations

import dataclasses

import pytest

from engine import (
    BANK,
    BuyProperty,
    DeclineProperty,
    Pay,
    ProposeTrade,
    Roll,
    RuleViolation,
    Scenario,
    SettleAuction,
    apply,
    check,
    new_game,
)
from engine.config import classic, duel, hasbro
from services.trade.store import TradeRow
from services.trade.trades import _reason_of, check_window, command_id, view

PLAYERS = ["ann", "bob", "cid"]


def table(seed: int = 5, external: tuple[str, ...] = ("trade",)):  # type: ignore[no-untyped-def]
    state, _ = new_game(duel(external=external), PLAYERS, seed=seed)
    return state


def test_the_current_player_may_propose_before_rolling() -> None:
    state = table()
    check_window(state, state.current)


def test_another_seat_may_not_propose() -> None:
    state = table()
    with pytest.raises(RuleViolation) as info:
        check_window(state, (state.current + 1) % 3)
    assert info.value.rule == "T1"


def test_a_payment_is_a_window_and_after_rolling_is_not() -> None:
    state = table(seed=5)  # the first roll is a double onto another's property (rent)
    me = state.current
    apply(state, Roll(me))
    assert state.phase.value == "payment"
    check_window(state, me)
    apply(state, Pay(me))
    check_window(state, me)  # the double: before rolling again
    state = table(seed=1)  # the first roll lands on a square with nothing to pay
    apply(state, Roll(state.current))
    assert state.phase.value == "post_roll"
    with pytest.raises(RuleViolation) as info:
        check_window(state, state.current)
    assert info.value.rule == "T1"


def test_T1_a_debtor_outside_their_turn_proposes_and_the_player_to_wait_does_not_as_at_the_table() -> None:
    """The trade service's window is the table's own (`_check_propose`): while another seat pays an
    auction it won during this turn, short of its price (debt resolution, D1), that debtor may
    propose, and the player whose turn it is waits; a debtor whose cash covers it has only to pay."""
    config = dataclasses.replace(classic(), external=("auction", "trade"))
    state = Scenario(players=("a", "b", "c"), config=config, positions={0: 0}, dice=((1, 2),)).state()
    apply(state, Roll(0))
    apply(state, DeclineProperty(0))
    auction = state.auction
    assert auction is not None
    apply(state, SettleAuction(BANK, auction.auction_id, 1, auction.start_price))
    assert state.current == 0 and state.actor == 1 and state.phase.value == "payment"
    with pytest.raises(RuleViolation) as info:
        check_window(state, 1)  # the cash covers the price: pay it
    assert info.value.rule == "T1"
    state.players[1].cash = auction.start_price - 1  # short of it: debt resolution
    check_window(state, 1)
    with pytest.raises(RuleViolation) as info:
        check_window(state, 0)
    assert info.value.rule == "T1"
    at_the_table = dataclasses.replace(config, external=("auction",))
    state.config = at_the_table  # the same position at a table that runs its own trades
    check(state, ProposeTrade(1, 2, give_cash=100, take_cash=100))
    with pytest.raises(RuleViolation):
        check(state, ProposeTrade(0, 2, give_cash=100, take_cash=100))


def test_T6_on_a_hasbro_table_any_active_player_proposes_at_any_time() -> None:
    state, _ = new_game(hasbro(external=("trade",)), PLAYERS, seed=1)
    others = [s for s in range(3) if s != state.current]
    for seat in others:
        check_window(state, seat)  # not the player whose turn it is
    moves = {"pre_roll": Roll, "buy": BuyProperty, "payment": Pay}
    while state.phase.value != "post_roll":  # after rolling too (T1 would refuse even the current player)
        apply(state, moves[state.phase.value](state.current))
    for seat in range(3):
        check_window(state, seat)
    state.players[others[0]].bankrupt = True
    with pytest.raises(RuleViolation) as info:
        check_window(state, others[0])
    assert info.value.rule == "G1"


def test_a_table_that_runs_its_own_trades_is_not_served() -> None:
    state, _ = new_game(classic(), PLAYERS, seed=3)
    with pytest.raises(RuleViolation) as info:
        check_window(state, state.current)
    assert info.value.rule == "T1" and "itself" in info.value.message


def test_a_finished_or_paused_game() -> None:
    state = table()
    state.paused = True
    with pytest.raises(RuleViolation) as info:
        check_window(state, state.current)
    assert info.value.rule == "E5"
    state.finished = True
    with pytest.raises(RuleViolation) as info:
        check_window(state, state.current)
    assert info.value.rule == "D5"


def test_view_and_command_id() -> None:
    row = TradeRow("t1", 4, 0, 2, 100, (3, 5), 0, (9,), "refused", 7, 42, "seat 0 has only $5", "T2")
    v = view(row)
    assert (v.table_id, v.trade_id, v.proposer, v.status, v.turn_no, v.table_seq) == ("t1", 4, 0, "refused", 7, 42)
    assert (v.terms.counterparty, v.terms.give_cash, list(v.terms.give_squares), list(v.terms.take_squares)) == (
        2,
        100,
        [3, 5],
        [9],
    )
    assert (v.rule, v.reason) == ("T2", "seat 0 has only $5")
    assert command_id("t1", 4) == "trade:t1:4"
    carded = view(TradeRow("t1", 5, 0, 2, 0, (), 50, (), "open", 7, 42, "", "", give_cards=(8,), take_cards=(104,)))
    assert (list(carded.terms.give_cards), list(carded.terms.take_cards)) == ([8], [104])  # T2 (hasbro)


class _Refusal:
    def __init__(self, details: str) -> None:
        self._details = details

    def details(self) -> str:
        return self._details


def test_the_table_refusal_loses_its_rule_prefix() -> None:
    assert _reason_of(_Refusal("[T2] seat 0 has only $5"), "T2") == "seat 0 has only $5"  # type: ignore[arg-type]
    assert _reason_of(_Refusal("something else"), "T2") == "something else"  # type: ignore[arg-type]
