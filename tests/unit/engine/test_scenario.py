"""G10 scenarios: a position from readable data, as events that replay (engine.scenario)."""

from __future__ import annotations

from pathlib import Path

import pytest

import engine
from engine import (
    BuildingsSoldDown,
    DiceRolled,
    LeftJail,
    Moved,
    Pay,
    PaymentDue,
    PaymentMade,
    PositionSet,
    Roll,
    Scenario,
    SellBuilding,
    TableCreated,
    TurnStarted,
    apply,
    check_invariants,
    dice_counter,
    replay,
)
from engine.codec import event_from_data, event_to_data, state_to_data
from servicekit.wire import event_from_proto, event_to_proto

PLAYERS = ("ann", "bob", "cid")

#: A mid-game hasbro position, everything the data can say set to something.
MIDGAME = Scenario(
    PLAYERS,
    mode="hasbro",
    seed=11,
    turn="bob",
    round=7,
    order=("cid", "ann", "bob"),
    cash={"ann": 820, "bob": 95, "cid": 1400},
    positions={"ann": "Boardwalk", "cid": 24},
    owners={"ann": ["Park Place", "Boardwalk", 5], "bob": [6, 8, 9, "Electric Company"], "cid": [21, 23, 24]},
    buildings={6: 2, 8: 2, 9: 1, 21: 5, 23: 4, 24: 4},
    mortgaged={5: 3},
    jail={"bob": 1},
    jail_cards={"cid": [104]},  # Community Chest's Get Out of Jail Free (C2)
    clock_ms=25 * 60_000,
    dice=((2, 5),),
)


def same(a: engine.TableState, b: engine.TableState) -> bool:
    return state_to_data(a) == state_to_data(b)


def test_G10_a_scenario_is_three_events_that_replay_to_the_position() -> None:
    events = MIDGAME.events()
    assert [type(e) for e in events] == [TableCreated, PositionSet, TurnStarted]
    state = replay(events)
    check_invariants(state, len(events))
    assert state.current == 1 and state.round == 7 and state.order == [2, 0, 1]
    assert [p.cash for p in state.players] == [820, 95, 1400]
    assert [p.position for p in state.players] == [39, 10, 24]  # bob in jail: on the jail square
    assert state.players[1].in_jail and state.players[1].jail_turns == 1
    assert state.players[2].jail_cards == [104] and 104 not in state.chest
    assert state.owner[37] == state.owner[39] == state.owner[5] == 0 and state.owner[12] == 1
    assert state.buildings[21] == 5 and state.mortgaged_round[5] == 3
    assert state.clock == 25 * 60_000 and state.turn_deadline == state.clock + 75_000  # E1 from the clock
    assert state.bank_houses() == 32 - 13 and state.bank_hotels() == 11


def test_G10_the_events_round_trip_through_json_and_protobuf_to_the_same_state() -> None:
    events = MIDGAME.events()
    state = MIDGAME.state()
    assert same(replay([event_from_data(event_to_data(e)) for e in events]), state)
    assert same(replay([event_from_proto(event_to_proto(e)) for e in events]), state)


def test_G10_play_goes_on_from_the_scenario_and_the_whole_log_replays() -> None:
    events = MIDGAME.events()
    state = replay(events)
    log = list(events)
    log += apply(state, Roll(1))  # bob in jail: 2 + 5, no doubles: a second failed roll (J4)
    assert DiceRolled(1, 2, 5) in log and state.players[1].in_jail and state.players[1].jail_turns == 2
    assert same(replay(log), state)


def test_G10_the_next_dice_are_chosen_by_the_generators_counter() -> None:
    scenario = Scenario(PLAYERS, dice=((6, 6), (1, 2)))
    state = scenario.state()
    assert state.rng_counter == dice_counter(state.rng_seed, ((6, 6), (1, 2)))
    first = apply(state, Roll(0))
    assert DiceRolled(0, 6, 6) in first and Moved(0, 0, 12) in first  # G3: doubles, roll again
    for _ in range(2):  # the industry on square 12 is offered: decline, and nobody bids (A1)
        if state.phase is engine.Phase.BUY:
            apply(state, engine.DeclineProperty(0))
        while state.phase is engine.Phase.AUCTION:
            apply(state, engine.PassBid(state.actor))
    assert DiceRolled(0, 1, 2) in apply(state, Roll(0))


def test_J4_the_third_failed_roll_in_jail_pays_the_fine_and_moves_written_as_a_scenario() -> None:
    """A rule corner set up in one line: bob's third try, the dice fixed to fail."""
    state = Scenario(PLAYERS, mode="hasbro", turn="bob", jail={"bob": 2}, dice=((3, 5),)).state()
    events = apply(state, Roll(1))
    assert events[0] == DiceRolled(1, 3, 5)
    assert events[1] == PaymentDue(1, -1, 50, "jail_fine", then_move=True, square=10)  # forced fine (D1: pay it)
    events = apply(state, Pay(1))
    paid = PaymentMade(1, -1, 50, "jail_fine", square=10)
    assert events[:3] == [paid, LeftJail(1, "forced_fine"), Moved(1, 10, 18)]
    assert not state.players[1].in_jail


def test_P8_the_issues_case_written_as_a_scenario() -> None:
    """A Park Place hotel next to Boardwalk's 4 houses, 3 houses left in the bank (cid holds 25)."""
    state = Scenario(
        PLAYERS,
        mode="hasbro",
        owners={"ann": ["Park Place", "Boardwalk"], "cid": [16, 18, 19, 21, 23, 24, 26, 27, 29]},
        buildings={"Park Place": 5, "Boardwalk": 4, 16: 3, 18: 3, 19: 3, 21: 3, 23: 3, 24: 3, 26: 3, 27: 2, 29: 2},
    ).state()
    assert state.bank_houses() == 3
    events = apply(state, SellBuilding(0, 37))
    assert BuildingsSoldDown(0, (37, 39), (3, 4), 200) in events


def test_G10_a_position_the_rules_do_not_allow_is_refused() -> None:
    with pytest.raises(ValueError, match="unevenly"):
        Scenario(PLAYERS, owners={"ann": [1, 3]}, buildings={1: 3, 3: 1}).events()  # P6
    with pytest.raises(ValueError, match="owners"):
        Scenario(PLAYERS, owners={"ann": [1]}, buildings={1: 1}).events()  # P5: half a group
    with pytest.raises(ValueError, match="no square named"):
        Scenario(PLAYERS, owners={"ann": ["Nowhere Ave"]}).events()
    with pytest.raises(ValueError, match="no player"):
        Scenario(PLAYERS, cash={"dan": 10}).events()
    with pytest.raises(ValueError, match=r"cards \[1\] are held, and only Get Out of Jail Free"):
        Scenario(PLAYERS, jail_cards={"ann": [1]}).events()  # C1: "Go to Jail" is not kept in hand


def test_the_mode_presets_are_exported_from_engine() -> None:
    assert engine.speed().mode == "speed" and engine.duel().mode == "duel"
    assert engine.team().mode == "team" and engine.custom(starting_cash=20_000).starting_cash == 20_000
    assert engine.classic().mode == "classic" and engine.hasbro().ruleset == "hasbro"


def test_G10_the_example_of_docs_scenarios_runs() -> None:
    text = (Path(__file__).parents[3] / "docs" / "SCENARIOS.md").read_text()
    code = text.split("```python\n", 1)[1].split("```", 1)[0]
    exec(compile(code, "docs/SCENARIOS.md", "exec"), {})  # its asserts are the test
