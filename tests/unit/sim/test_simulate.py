"""`monopoly simulate` and `monopoly play`: deterministic summaries, every game ended."""

from __future__ import annotations

import dataclasses
import gc
import json
import re
from pathlib import Path

import pytest

from engine import (
    AuctionStarted,
    Bid,
    DeclineProperty,
    Event,
    Leave,
    Moved,
    PassBid,
    Roll,
    Scenario,
    TableCreated,
    TableState,
    TurnEnded,
    apply,
    check_invariants,
    classic,
    replay,
)
from engine.codec import state_to_data
from monopoly_cli.main import main
from sim.narrate import worth_at_end
from sim.runner import GAME_GC_THRESHOLD, TIMING_KEYS, RunSpec, events_bytes, play_game, simulate

REQUIRED_KEYS = {
    "games",
    "finished",
    "capped",
    "rounds_mean",
    "player_turns",
    "events",
    "events_hash",
    "games_per_s",
    "player_turns_per_s",
}


def _run_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, object]:
    assert main(["simulate", *args, "--json"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1, "--json prints exactly one JSON object on stdout"
    data: dict[str, object] = json.loads(out[0])
    return data


def _without_timing(summary: dict[str, object]) -> dict[str, object]:
    return {k: v for k, v in summary.items() if k not in TIMING_KEYS}


def test_simulate_json_has_the_summary_keys_and_ends_every_game(capsys: pytest.CaptureFixture[str]) -> None:
    summary = _run_json(capsys, "--games", "20", "--seed", "7")
    assert summary.keys() >= REQUIRED_KEYS
    assert summary["games"] == 20
    assert summary["finished"] + summary["capped"] == 20  # type: ignore[operator]
    assert summary["events"] > summary["player_turns"] > 0  # type: ignore[operator]
    assert len(str(summary["events_hash"])) == 32


def test_G10_simulate_twice_gives_the_same_summary_apart_from_timings(capsys: pytest.CaptureFixture[str]) -> None:
    first = _run_json(capsys, "--games", "15", "--seed", "11")
    second = _run_json(capsys, "--games", "15", "--seed", "11")
    assert _without_timing(first) == _without_timing(second)
    other = _run_json(capsys, "--games", "15", "--seed", "12")
    assert other["events_hash"] != first["events_hash"]


def test_G10_the_events_hash_the_readme_gives_is_todays(capsys: pytest.CaptureFixture[str]) -> None:
    """The README names the events hash of `--games 200 --seed 7`: a change of any event of those games
    moves it, and must say so there (and in the changelog) rather than pass unnoticed."""
    readme = (Path(__file__).resolve().parents[3] / "README.md").read_text()
    found = re.search(r"hash of `--games 200 --seed 7` is `([0-9a-f]{32})`", readme)
    assert found is not None
    assert _run_json(capsys, "--games", "200", "--seed", "7")["events_hash"] == found.group(1)


def test_workers_do_not_change_the_games() -> None:
    spec = RunSpec(games=12, seed=5)
    one = simulate(spec, workers=1).as_dict()
    two = simulate(spec, workers=2).as_dict()
    assert _without_timing(one) == _without_timing(two)


def test_a_run_raises_the_collectors_thresholds_while_games_play_and_restores_them() -> None:
    before = gc.get_threshold()
    seen: list[tuple[int, int, int]] = []
    summary = simulate(RunSpec(games=2, seed=3), progress=lambda done, total: seen.append(gc.get_threshold()))
    assert summary.as_dict()["games"] == 2
    assert seen == [GAME_GC_THRESHOLD, GAME_GC_THRESHOLD]
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0  # what was frozen for the run is collectable again


def test_round_cap_ends_games_by_net_worth_and_is_counted() -> None:
    summary = simulate(RunSpec(games=6, seed=3, round_cap=5)).as_dict()
    assert summary["capped"] == 6
    assert summary["finished"] == 0
    assert summary["rounds_mean"] == 5


@pytest.mark.parametrize("bots", ["heuristic", "random"])
def test_bots_play_only_legal_commands_and_keep_the_invariants(bots: str) -> None:
    """A bot's illegal command would raise RuleViolation out of play_game."""
    for seed in range(4):
        seen: list[Event] = []

        def check(state: TableState, events: list[Event], seen: list[Event] = seen) -> None:
            seen.extend(events)
            check_invariants(state, len(seen))

        state, result = play_game(classic(round_cap=150), 4, seed, bots, on_events=check)
        assert state.finished
        assert result.events == len(seen)
        assert state_to_data(replay(seen)) == state_to_data(state)


def test_heuristic_bots_build_trade_and_finish_without_the_cap() -> None:
    summary = simulate(RunSpec(games=30, seed=9)).as_dict()
    assert summary["finished"] >= 27, "sensible bots bankrupt each other well before the cap"
    kinds: set[str] = set()

    def collect(state: TableState, events: list[Event]) -> None:
        kinds.update(type(e).__name__ for e in events)

    for seed in range(6):
        play_game(classic(), 4, seed, "heuristic", on_events=collect)
    assert {"BuildingBuilt", "TradeExecuted", "AuctionSettled", "BetSettled", "PropertyMortgaged"} <= kinds


def test_play_narrates_a_game_to_its_end(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["play", "--seed", "4"]) == 0
    out = capsys.readouterr().out
    assert "-- round 1:" in out
    assert "rolls" in out and "moves to" in out
    assert "place 1:" in out and " wins (" in out


def test_H6_D5_play_prints_the_worth_the_end_counted_with_payments_pending() -> None:
    """B wins while owing $4,000 for Boardwalk: the end counted the payment as made, and the
    finished state, which owes nothing (D5), would print B $4,000 richer."""
    scenario = Scenario(players=("A", "B", "C"), mode="classic", cash={"B": 3000}, positions={"A": 36}, dice=((1, 2),))
    events = scenario.events()
    state = replay(events)
    for command in (Roll(0), DeclineProperty(0), Bid(1, 4000), PassBid(2), Leave(2), Leave(0)):
        events += apply(state, command)
    boardwalk = state.config.board.squares[39].price
    assert state.finished and state.net_worth(1) == 3000 + boardwalk
    assert worth_at_end(events)[1] == 3000 - 4000 + boardwalk


def test_bad_arguments_get_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", "--games", "0"]) == 2
    assert "--games" in capsys.readouterr().err
    assert main(["simulate", "--players", "6"]) == 2
    assert "2-5 players" in capsys.readouterr().err


@pytest.mark.parametrize(("mode", "players"), [("classic", 4), ("speed", 4), ("duel", 3), ("team", 4), ("custom", 5)])
def test_every_mode_ends_every_game_on_the_clock_deterministically(mode: str, players: int) -> None:
    spec = RunSpec(games=8, players=players, seed=3, mode=mode)
    first = simulate(spec).as_dict()
    assert first["finished"] + first["capped"] == 8
    assert first["capped"] == 0, "the clock and the economy rules end games before the round cap"
    assert first["game_minutes"]["min"] > 0  # type: ignore[index]
    expected_reason = "last_team" if mode == "team" else "last_player"
    assert first["end_reasons"] == {expected_reason: 8}
    assert _without_timing(simulate(spec).as_dict()) == _without_timing(first)


def test_players_who_leave_time_out_and_go_bankrupt() -> None:
    summary = simulate(RunSpec(games=10, seed=4, leave_rate=0.01)).as_dict()
    assert summary["turn_timeouts"] > 0
    assert summary["bankruptcies"]["timeout"] > 0  # type: ignore[index]
    assert summary["finished"] == 10


def test_untimed_games_have_no_clock() -> None:
    summary = simulate(RunSpec(games=4, seed=4, think_ms=0)).as_dict()
    assert summary["game_minutes"]["max"] == 0  # type: ignore[index]
    assert summary["turn_timeouts"] == 0


def test_G10_the_events_hash_covers_every_field_of_every_event_and_leaves_out_added_defaults() -> None:
    """The per-game encoding: one changed field anywhere changes it; a later-added field at its
    default (the config's, an event's) is left out, so older games keep their hash."""
    seen: list[Event] = []
    play_game(classic(round_cap=40), 4, 3, "heuristic", on_events=lambda state, events: seen.extend(events))
    encoded = events_bytes(seen)
    names, values = encoded.split(b"\n", 1)
    assert names.split(b" ") == [type(e).__name__.encode() for e in seen]
    assert len(json.loads(values)) == len(seen)
    moved = next(i for i, e in enumerate(seen) if isinstance(e, Moved))
    for changed in (dataclasses.replace(seen[moved], to_square=(seen[moved].to_square + 1) % 40), TurnEnded(0)):  # type: ignore[attr-defined]
        assert events_bytes([*seen[:moved], changed, *seen[moved + 1 :]]) != encoded
    started = next(e for e in seen if isinstance(e, AuctionStarted))
    assert started.bid_rule == ""
    assert b"bid_rule" not in events_bytes([started])
    assert b'"bid_rule":"A2"' in events_bytes([dataclasses.replace(started, bid_rule="A2")])
    created = seen[0]
    assert isinstance(created, TableCreated)
    assert b'"hotel_after_houses"' not in events_bytes([created])  # an added config field at its default
    assert b'"hotel_after_houses":3' in events_bytes([TableCreated(classic(hotel_after_houses=3), 3, created.players)])
