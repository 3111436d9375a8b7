"""X1: the Classic preset of the online rule set, and the round cap of TableConfig."""

from __future__ import annotations

import pytest

import engine
from engine import (
    Build,
    BuyProperty,
    EndTurn,
    GameEnded,
    Pay,
    Phase,
    Roll,
    RuleViolation,
    SellBuilding,
    Surrender,
    TurnEnded,
    TurnStarted,
    classic,
    new_game,
)
from engine.codec import state_to_data

from .helpers import Table, force_dice, give, place

# -- X1: Classic -------------------------------------------------------------------------


def test_X1_classic_preset_values() -> None:
    cfg = classic()
    assert (cfg.ruleset, cfg.mode) == ("online", "classic")
    assert (cfg.min_players, cfg.max_players) == (2, 5)
    assert cfg.starting_cash == 15000
    assert cfg.even_build is True
    assert cfg.salary == 2000 and cfg.start_bonus == 1000 and cfg.jail_fine == 500
    assert cfg.round_cap is None
    assert engine.preset("classic") == cfg
    with pytest.raises(ValueError, match="unknown preset"):
        engine.preset("no-such-mode")


@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_X1_classic_takes_2_to_5_players_with_15000_each(players: int) -> None:
    state, events = new_game(classic(), [f"p{i}" for i in range(players)], seed=11)
    assert len(state.players) == players
    assert [p.cash for p in state.players] == [15000] * players
    assert sorted(state.order) == list(range(players))
    assert state.phase is Phase.PRE_ROLL
    assert state.current == state.order[0]
    engine.check_invariants(state, len(events))


@pytest.mark.parametrize("players", [0, 1, 6, 8])
def test_X1_classic_refuses_other_player_counts(players: int) -> None:
    with pytest.raises(RuleViolation) as err:
        new_game(classic(), [f"p{i}" for i in range(players)], seed=11)
    assert err.value.rule == "X1"


def test_X1_classic_builds_evenly() -> None:
    t = Table(4, seed=1)
    seat = t.state.current
    give(t.state, seat, 6, 8, 9)
    t.do(Build(seat, 6))
    with pytest.raises(RuleViolation) as err:
        t.do(Build(seat, 6))  # 2 on one while the others have 0
    assert err.value.rule == "P6"
    legal_builds = [c for c in engine.legal_commands(t.state, seat) if isinstance(c, Build)]
    assert legal_builds == []  # P9: one build action per group per turn in Classic
    # the next turns: even building lets the others catch up first
    t.state.builds.clear()
    t.do(Build(seat, 8))
    t.state.builds.clear()
    with pytest.raises(RuleViolation) as err:
        t.do(Build(seat, 8))
    assert err.value.rule == "P6"
    t.do(Build(seat, 9))
    t.state.builds.clear()
    t.do(Build(seat, 9))
    assert t.state.buildings[6:10] == [1, 0, 1, 2]
    # selling follows the same rule in reverse
    with pytest.raises(RuleViolation) as err:
        t.do(SellBuilding(seat, 6))
    assert err.value.rule == "P6"
    t.do(SellBuilding(seat, 9))
    assert t.state.buildings[6:10] == [1, 0, 1, 1]


def test_X1_uneven_building_is_a_config_switch_not_classic() -> None:
    t = Table(4, seed=1, config=classic(even_build=False, builds_per_group_per_turn=None))
    seat = t.state.current
    give(t.state, seat, 6, 8, 9)
    t.do(Build(seat, 6))
    t.do(Build(seat, 6))
    assert t.state.buildings[6] == 2


# -- the round cap ----------------------------------------------------------------------------


def play_quiet_turn(t: Table, d1: int, d2: int, *, buy: bool = False) -> list[engine.Event]:
    """Roll the given non-double dice and finish the turn (buying, paying as needed)."""
    seat = t.state.current
    force_dice(t.state, d1, d2)
    events = t.do(Roll(seat))
    if buy:
        events += t.do(BuyProperty(seat))
    while t.state.phase is Phase.PAYMENT:
        events += t.do(Pay(t.state.actor))
    assert t.state.phase is Phase.POST_ROLL
    events += t.do(EndTurn(seat))
    return events


def test_round_cap_ends_the_game_by_net_worth() -> None:
    t = Table(2, seed=1, config=classic(round_cap=1))
    first, second = t.state.order
    play_quiet_turn(t, 1, 2, buy=True)  # 0 -> 3: buys GrocerGo for $600, net worth unchanged (15000)
    assert not t.state.finished
    assert t.state.current == second and t.state.round == 1
    events = play_quiet_turn(t, 1, 3)  # 0 -> 4: income tax $2,000 -> net worth 13000
    assert events[-2:] == [TurnEnded(second), GameEnded(first, _places({first: 1, second: 2}), "round_cap")]
    assert t.state.finished and t.state.end_reason == "round_cap" and t.state.winner == first
    assert t.state.phase is Phase.GAME_OVER
    assert [p.place for p in t.state.players] == list(_places({first: 1, second: 2}))
    with pytest.raises(RuleViolation) as err:
        t.do(Roll(first))
    assert err.value.rule == "D5"


def test_round_cap_counts_property_prices_mortgages_and_buildings_in_net_worth() -> None:
    t = Table(3, seed=1, config=classic(round_cap=2))
    a, b, c = t.state.order
    give(t.state, a, 37)
    t.state.mortgaged_round[37] = 0  # mortgaged: half the $3,500 price
    give(t.state, b, 39)  # $4,000
    give(t.state, c, 6, 8, 9)  # $1,000 + $1,000 + $1,200
    t.state.buildings[6] = 2
    t.state.buildings[8] = t.state.buildings[9] = 1  # 4 buildings at cost $500
    assert [t.state.net_worth(s) for s in (a, b, c)] == [16750, 19000, 20200]
    # every turn below lands on Start (salary + bonus, the same for everyone)
    for turn in range(5):  # the cap does not end the game before the last turn of round 2
        events = _finish_turn_at_start(t)
        assert not t.state.finished, turn
        assert isinstance(events[-1], TurnStarted)
    assert t.state.round == 2 and t.state.current == c
    events = _finish_turn_at_start(t)
    places = _places({a: 3, b: 2, c: 1})
    assert events[-2:] == [TurnEnded(c), GameEnded(c, places, "round_cap")]
    assert [t.state.net_worth(s) for s in (a, b, c)] == [16750 + 6000, 19000 + 6000, 20200 + 6000]
    assert t.state.winner == c


def test_round_cap_keeps_the_places_of_eliminated_players() -> None:
    t = Table(4, seed=1, config=classic(round_cap=1))
    assert t.state.order == [1, 2, 3, 0]
    t.do(Surrender(1))  # out first: 4th
    give(t.state, 3, 39)  # richest among the rest
    t.do(Surrender(2))  # 3rd
    events = _finish_turn_at_start(t)  # seat 3's turn
    assert isinstance(events[-1], TurnStarted) and events[-1].seat == 0
    events = _finish_turn_at_start(t)  # seat 0's turn ends round 1
    assert events[-1] == GameEnded(3, (2, 4, 3, 1), "round_cap")


def test_round_cap_none_never_ends_the_game_by_rounds() -> None:
    t = Table(2, seed=1)
    for _ in range(30):
        _finish_turn_at_start(t)
    assert t.state.round == 16 and not t.state.finished


# -- helpers ------------------------------------------------------------------------------


def _places(by_seat: dict[int, int]) -> tuple[int, ...]:
    return tuple(by_seat[s] for s in sorted(by_seat))


def _finish_turn_at_start(t: Table) -> list[engine.Event]:
    """Take a quiet turn: from square 36 roll 1+3 -> 40 = Start (salary + bonus), then end the turn."""
    seat = t.state.current
    place(t.state, seat, 36)
    force_dice(t.state, 1, 3)
    events = t.do(Roll(seat))
    assert t.state.phase is Phase.POST_ROLL, events
    return events + t.do(EndTurn(seat))


def test_round_cap_state_survives_the_json_round_trip() -> None:
    import json

    from engine import codec

    t = Table(2, seed=1, config=classic(round_cap=3))
    data = state_to_data(t.state)
    restored = codec.state_from_data(json.loads(codec.dumps(data)))
    assert restored.config.round_cap == 3
    assert state_to_data(restored) == data
