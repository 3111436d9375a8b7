"""The events hash reads the same field values through the compiled reader as through the getters."""

from __future__ import annotations

import operator
import sys
from pathlib import Path

import orjson
import pytest

from engine import EVENT_TYPES, Event, event_values, preset
from sim import runner
from sim.runner import DEFAULT_THINK_MS, play_game

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tools"))
import gen_event_values  # noqa: E402


def test_event_values_module_matches_the_event_types() -> None:
    """Generated from the events' fields: a new event or field shows up as a stale module."""
    path = ROOT / "libs" / "engine" / "event_values.py"
    assert path.read_text() == gen_event_values.generate(), "stale: run tools/gen_event_values.py"


def _getter_values(events: list[Event]) -> list[object]:
    return list(map(operator.call, map(runner._VALUES.__getitem__, map(type, events)), events))


@pytest.mark.parametrize(("mode", "think_ms"), [("classic", 0), ("duel", DEFAULT_THINK_MS), ("hasbro", 0)])
def test_G10_the_reader_gives_what_the_getters_give_for_every_event(mode: str, think_ms: int) -> None:
    seen: list[Event] = []
    for seed in range(3):
        play_game(
            preset(mode, round_cap=60),
            3 if mode == "duel" else 4,
            seed,
            "heuristic",
            on_events=lambda state, events: seen.extend(events),
            hash_events=False,
            think_ms=think_ms,
        )
    assert len({type(e) for e in seen}) > 15  # many kinds of event, not only the turn's
    names, read, special = event_values.values(seen)
    assert names == [type(e).__name__.encode() for e in seen]
    assert read == _getter_values(seen)
    assert orjson.dumps(read[1:]) == orjson.dumps(_getter_values(seen[1:]))  # the config of [0] is not JSON
    assert special == [i for i, e in enumerate(seen) if type(e) in runner._SPECIAL]
    assert special[0] == 0 and len(special) > 1  # TableCreated, and some auctions (their bid rule added later)
    assert {type(e) for e in seen} <= set(EVENT_TYPES.values())


def test_G10_the_events_hash_is_the_same_through_the_compiled_reader_and_the_getters(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The reader is used in the native build only; either way the encoding is byte for byte the same."""
    seen: list[Event] = []
    play_game(preset("classic", round_cap=60), 4, 5, "heuristic", on_events=lambda state, events: seen.extend(events))
    encodings = set()
    for compiled in (True, False):
        monkeypatch.setattr(runner, "_COMPILED_VALUES", compiled)
        encodings.add(runner.events_bytes(seen))
    assert len(encodings) == 1
