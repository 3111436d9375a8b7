"""K1-K4: the casino on square 20 (online rule set, Classic mode)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable

import pytest

import engine
from engine import (
    BetDeclined,
    BetPlaced,
    BetSettled,
    CardDrawn,
    CasinoOpened,
    DeclineBet,
    EndTurn,
    Moved,
    Phase,
    PlaceBet,
    Roll,
    RuleViolation,
    casino,
)
from engine.codec import state_to_data

from .helpers import Table, force_dice, force_draws, place, set_cash

CASINO = 20
TRIP_TO_CASINO = 2  # chance card id: "Take a trip to the Casino"


def set_pool(state: engine.TableState, amount: int) -> None:
    """Hand-fill the jackpot pool with bank money (keeps the money invariant)."""
    state.bank_out += amount - state.jackpot
    state.jackpot = amount


def at_casino(t: Table) -> int:
    """Move the current player onto the casino with a plain (non-double) roll; return the seat."""
    seat = t.state.current
    place(t.state, seat, 12)
    force_dice(t.state, 3, 5)
    events = t.do(Roll(seat))
    assert Moved(seat, 12, CASINO) in events
    assert events[-1] == CasinoOpened(seat)
    assert t.state.phase is Phase.CASINO
    assert t.state.actor == seat
    return seat


def outcome(die: int, jackpot: bool) -> Callable[[int, int], bool]:
    """A force_draws predicate: the next bet rolls `die` and the jackpot draw is `jackpot`."""
    rules = engine.classic().casino

    def predicate(seed: int, counter: int) -> bool:
        return casino.draw(seed, counter, rules) == (die, jackpot)

    return predicate


# -- K1: opening the bet -----------------------------------------------------------


def test_K1_landing_on_square_20_opens_the_bet_with_every_legal_pick() -> None:
    t = Table(4, seed=1)
    seat = at_casino(t)
    legal = engine.legal_commands(t.state, seat)
    bets = [c for c in legal if isinstance(c, PlaceBet)]
    # 6 singles + 15 pairs + 20 triples, all distinct numbers from 1-6, plus declining
    assert len(bets) == 6 + 15 + 20
    assert {c.numbers for c in bets} == {combo for k in (1, 2, 3) for combo in itertools.combinations(range(1, 7), k)}
    assert DeclineBet(seat) in legal
    assert not any(isinstance(c, (Roll, EndTurn)) for c in legal)
    # nothing else may happen before the bet is placed or declined
    with pytest.raises(RuleViolation):
        t.do(EndTurn(seat))


def test_K1_a_chance_card_sending_to_the_casino_opens_the_bet() -> None:
    t = Table(4, seed=1)
    seat = t.state.current
    place(t.state, seat, 12)
    t.state.deck.remove(TRIP_TO_CASINO)
    t.state.deck.insert(0, TRIP_TO_CASINO)
    force_dice(t.state, 2, 3)  # 12 -> 17, a chance square
    events = t.do(Roll(seat))
    assert CardDrawn(seat, "chance", TRIP_TO_CASINO) in events
    assert Moved(seat, 17, CASINO) in events
    assert events[-1] == CasinoOpened(seat)
    assert t.state.phase is Phase.CASINO
    assert t.state.players[seat].position == CASINO


def test_K1_declining_the_bet_lets_the_turn_go_on() -> None:
    t = Table(4, seed=1)
    seat = at_casino(t)
    cash = t.state.players[seat].cash
    events = t.do(DeclineBet(seat))
    assert events == [BetDeclined(seat)]
    assert t.state.players[seat].cash == cash
    assert t.state.jackpot == 0  # K4: only a bet feeds the pool
    assert t.state.phase is Phase.POST_ROLL
    assert EndTurn(seat) in engine.legal_commands(t.state, seat)
    t.do(EndTurn(seat))
    assert t.state.current != seat


def test_K1_declining_after_doubles_lets_the_player_roll_again() -> None:
    t = Table(4, seed=1)
    seat = t.state.current
    place(t.state, seat, 12)
    force_dice(t.state, 4, 4)
    assert t.do(Roll(seat))[-1] == CasinoOpened(seat)
    t.do(DeclineBet(seat))
    assert t.state.phase is Phase.PRE_ROLL
    assert Roll(seat) in engine.legal_commands(t.state, seat)


def test_K1_the_stake_is_1000_and_paid_to_the_bank() -> None:
    t = Table(4, seed=1)
    seat = at_casino(t)
    force_draws(t.state, outcome(6, False))
    cash, bank_in = t.state.players[seat].cash, t.state.bank_in
    events = t.do(PlaceBet(seat, (1,)))
    assert events[0] == BetPlaced(seat, (1,), 1000, 500)
    assert t.state.players[seat].cash == cash - 1000
    assert t.state.bank_in == bank_in + 1000
    assert t.state.phase is Phase.POST_ROLL


@pytest.mark.parametrize(
    "numbers",
    [(), (1, 2, 3, 4), (1, 2, 3, 4, 5, 6), (1, 1), (2, 5, 2), (0,), (7,), (1, 7), (-1, 2), (3, 6, 9), ("1",), (1.5,)],
)
def test_K1_bad_numbers_are_refused_and_change_nothing(numbers: tuple) -> None:
    t = Table(4, seed=1)
    seat = at_casino(t)
    before = state_to_data(t.state)
    with pytest.raises(RuleViolation) as err:
        t.do(PlaceBet(seat, numbers))
    assert err.value.rule == "K1"
    assert state_to_data(t.state) == before
    assert t.state.phase is Phase.CASINO


@pytest.mark.parametrize("numbers", [(True,), (True, 2), (False, 3)])
def test_K1_booleans_are_not_numbers_from_1_to_6(numbers: tuple) -> None:
    """The codec refuses a bool where an int is expected, so a bet on (True, 2) accepted by the engine
    records BetPlaced/BetSettled events that `codec.event_from_data` cannot read back."""
    t = Table(4, seed=1)
    seat = at_casino(t)
    before = state_to_data(t.state)
    with pytest.raises(RuleViolation) as err:
        t.do(PlaceBet(seat, numbers))
    assert err.value.rule == "K1"
    assert state_to_data(t.state) == before


def test_K1_a_player_short_of_the_stake_cannot_bet_but_may_decline() -> None:
    t = Table(4, seed=1)
    seat = at_casino(t)
    set_cash(t.state, seat, 999)
    with pytest.raises(RuleViolation) as err:
        t.do(PlaceBet(seat, (1, 2)))
    assert err.value.rule == "K1"
    assert DeclineBet(seat) in engine.legal_commands(t.state, seat)
    assert not any(isinstance(c, PlaceBet) for c in engine.legal_commands(t.state, seat))
    t.do(DeclineBet(seat))
    assert t.state.phase is Phase.POST_ROLL


def test_K1_no_bet_outside_the_casino_and_no_bet_by_another_seat() -> None:
    t = Table(4, seed=1)
    seat = t.state.current
    with pytest.raises(RuleViolation) as err:
        t.do(PlaceBet(seat, (1,)))
    assert err.value.rule == "K1"
    seat = at_casino(t)
    other = next(s for s in t.state.order if s != seat)
    with pytest.raises(RuleViolation) as err:
        t.do(PlaceBet(other, (1,)))
    assert err.value.rule == "K1"
    with pytest.raises(RuleViolation) as err:
        t.do(DeclineBet(other))
    assert err.value.rule == "K1"


# -- K2: the die ---------------------------------------------------------------------


@pytest.mark.parametrize(("numbers", "prize"), [((4,), 6000), ((2, 4), 3000), ((1, 4, 6), 2000)])
def test_K2_a_hit_pays_6000_over_k_stake_included(numbers: tuple[int, ...], prize: int) -> None:
    t = Table(4, seed=1)
    seat = at_casino(t)
    force_draws(t.state, outcome(4, False))
    cash = t.state.players[seat].cash
    events = t.do(PlaceBet(seat, numbers))
    settled = events[-1]
    assert isinstance(settled, BetSettled)
    assert (settled.die, settled.jackpot_hit, settled.payout, settled.jackpot) == (4, False, prize, 0)
    # the payout includes the stake: net gain is prize - 1000
    assert t.state.players[seat].cash == cash - 1000 + prize


@pytest.mark.parametrize("numbers", [(4,), (2, 4), (1, 4, 6)])
def test_K2_a_miss_loses_the_stake(numbers: tuple[int, ...]) -> None:
    t = Table(4, seed=1)
    seat = at_casino(t)
    force_draws(t.state, outcome(5, False))
    cash = t.state.players[seat].cash
    settled = t.do(PlaceBet(seat, numbers))[-1]
    assert isinstance(settled, BetSettled)
    assert (settled.die, settled.payout, settled.jackpot) == (5, 0, 0)
    assert t.state.players[seat].cash == cash - 1000


def test_K2_unsorted_picks_are_settled_as_the_same_set() -> None:
    t = Table(4, seed=1)
    seat = at_casino(t)
    force_draws(t.state, outcome(3, False))
    cash = t.state.players[seat].cash
    settled = t.do(PlaceBet(seat, (6, 3)))[-1]
    assert isinstance(settled, BetSettled)
    assert settled.payout == 3000
    assert t.state.players[seat].cash == cash + 2000


def test_K2_the_die_comes_from_the_tables_generator() -> None:
    t = Table(4, seed=1)
    seat = at_casino(t)
    counter = t.state.rng_counter
    die, jackpot = casino.draw(t.state.rng_seed, counter, t.state.config.casino)
    settled = t.do(PlaceBet(seat, (1, 2, 3)))[-1]
    assert isinstance(settled, BetSettled)
    assert (settled.die, settled.jackpot_hit) == (die, jackpot)
    assert settled.draws == casino.DRAWS_PER_BET
    assert t.state.rng_counter == counter + casino.DRAWS_PER_BET


# -- K3: the jackpot -------------------------------------------------------------------


def test_K3_a_jackpot_hit_pays_the_whole_pool_even_when_the_die_misses() -> None:
    t = Table(4, seed=1)
    seat = at_casino(t)
    set_pool(t.state, 7500)
    force_draws(t.state, outcome(6, True))
    cash = t.state.players[seat].cash
    settled = t.do(PlaceBet(seat, (1, 2)))[-1]
    assert isinstance(settled, BetSettled)
    assert settled.jackpot_hit and settled.payout == 0
    assert settled.jackpot == 8000  # the pool including this bet's $500
    assert t.state.players[seat].cash == cash - 1000 + 8000
    assert t.state.jackpot == 0


def test_K3_the_jackpot_is_independent_of_the_die_a_hit_pays_both() -> None:
    t = Table(4, seed=1)
    seat = at_casino(t)
    set_pool(t.state, 2000)
    force_draws(t.state, outcome(2, True))
    cash = t.state.players[seat].cash
    settled = t.do(PlaceBet(seat, (2,)))[-1]
    assert isinstance(settled, BetSettled)
    assert (settled.payout, settled.jackpot) == (6000, 2500)
    assert t.state.players[seat].cash == cash - 1000 + 6000 + 2500
    assert t.state.jackpot == 0


def test_K3_without_a_jackpot_hit_the_pool_stays() -> None:
    t = Table(4, seed=1)
    seat = at_casino(t)
    set_pool(t.state, 3000)
    force_draws(t.state, outcome(2, False))
    t.do(PlaceBet(seat, (2,)))
    assert t.state.jackpot == 3500


def test_K3_K2_draw_frequencies_with_a_fixed_seed() -> None:
    """Statistics of `casino.draw` over one table stream (2 draws per bet, as the table consumes them).

    N = 120,000 bets. Jackpot: p = 1/20, sd = sqrt(p(1-p)/N) ~ 0.00063; we allow 5 sd (~0.0032), so
    a correct generator fails with probability ~6e-7 (and the seed is fixed, so the test is deterministic).
    Die faces: chi-square with 5 degrees of freedom, refused above 30.9 (p ~ 1e-5). Independence of the
    die and the jackpot: 6x2 contingency chi-square, 5 degrees of freedom, same bound.
    """
    rules = engine.classic().casino
    seed = engine.rng.table_seed(20240601)
    n = 120_000
    joint = [[0, 0] for _ in range(6)]
    for i in range(n):
        die, hit = casino.draw(seed, 1000 + casino.DRAWS_PER_BET * i, rules)
        assert 1 <= die <= 6
        joint[die - 1][hit] += 1
    hits = sum(row[1] for row in joint)
    p = 1 / rules.jackpot_odds
    assert abs(hits / n - p) <= 5 * math.sqrt(p * (1 - p) / n)

    faces = [sum(row) for row in joint]
    expected = n / 6
    chi_faces = sum((f - expected) ** 2 / expected for f in faces)
    assert chi_faces < 30.9, faces

    chi_joint = 0.0
    for row, total in zip(joint, faces, strict=True):
        for col, col_total in ((0, n - hits), (1, hits)):
            e = total * col_total / n
            chi_joint += (row[col] - e) ** 2 / e
    assert chi_joint < 30.9, joint


def test_K3_K4_the_pool_through_many_bets_on_one_table() -> None:
    """Many real bets on one table: the pool grows by $500 a bet and empties on each jackpot."""
    t = Table(2, seed=7)
    pool = 0
    jackpots = 0
    for _ in range(300):
        seat = at_casino(t)
        cash = t.state.players[seat].cash
        if cash < 1000:
            set_cash(t.state, seat, 5000)
            cash = 5000
        settled = t.do(PlaceBet(seat, (1, 2, 3)))[-1]
        assert isinstance(settled, BetSettled)
        pool += 500
        expected_payout = 2000 if settled.die in (1, 2, 3) else 0
        assert settled.payout == expected_payout
        if settled.jackpot_hit:
            jackpots += 1
            assert settled.jackpot == pool
            pool = 0
        assert t.state.jackpot == pool
        assert t.state.players[seat].cash == cash - 1000 + settled.payout + settled.jackpot
        t.do(EndTurn(seat))
    assert 3 <= jackpots <= 30  # mean 15, sd ~3.8


# -- K4: the pool ------------------------------------------------------------------------


def test_K4_every_bet_adds_500_of_bank_money_to_the_pool() -> None:
    t = Table(4, seed=1)
    assert t.state.jackpot == 0  # one pool per table, starting at $0
    for bet in range(1, 4):
        seat = at_casino(t)
        force_draws(t.state, outcome(6, False))
        cash, bank_out = t.state.players[seat].cash, t.state.bank_out
        events = t.do(PlaceBet(seat, (1, 2, 3)))
        placed = events[0]
        assert isinstance(placed, BetPlaced)
        assert placed.pool_add == 500
        assert t.state.jackpot == 500 * bet
        # the stake is not the pool's money: the player loses exactly the stake, the bank funds the pool
        assert t.state.players[seat].cash == cash - 1000
        assert t.state.bank_out == bank_out + 500
        t.do(EndTurn(seat))


def test_K4_the_pool_survives_a_json_round_trip() -> None:
    import json

    from engine import codec

    t = Table(4, seed=1)
    seat = at_casino(t)
    force_draws(t.state, outcome(6, False))
    t.do(PlaceBet(seat, (1,)))
    restored = codec.state_from_data(json.loads(codec.dumps(codec.state_to_data(t.state))))
    assert restored.jackpot == 500
    assert engine.replay(t.events).jackpot == 500
