"""Scenario helpers for rule tests: set up a table, steer its dice, play commands.

Dice come from the table's counter-based generator, so a test chooses the
next roll by moving the counter to a position whose draws give that roll
(`force_dice`); the engine itself is never patched.
"""

from __future__ import annotations

from collections.abc import Iterable

import pytest

from engine import (
    Command,
    Event,
    Roll,
    RuleViolation,
    TableConfig,
    TableState,
    apply,
    check_invariants,
    classic,
    new_game,
    replay,
    rng,
)
from engine.codec import state_to_data


class Table:
    """A table under test: its state and every event so far (checked as it goes)."""

    def __init__(self, players: int = 4, seed: int = 1, config: TableConfig | None = None) -> None:
        self.state, self.events = new_game(config or classic(), [f"p{i}" for i in range(players)], seed)

    def do(self, command: Command) -> list[Event]:
        """Apply a command; check the invariants and that a replay gives the same state."""
        events = apply(self.state, command)
        self.events.extend(events)
        check_invariants(self.state, len(self.events))
        return events

    def replay_matches(self) -> bool:
        """Replay equality; only meaningful for a table never edited by hand
        (`force_dice`, `give`, ... change the state outside the events)."""
        return state_to_data(replay(self.events)) == state_to_data(self.state)

    def types(self, events: Iterable[Event]) -> list[str]:
        return [type(e).__name__ for e in events]


def force_dice(state: TableState, *dice: int) -> None:
    """Move the generator so the next rolls are `dice` (pairs: d1, d2, d1, d2, ...)."""
    assert len(dice) % 2 == 0
    counter = state.rng_counter
    while True:
        if all(rng.die(state.rng_seed, counter + i) == d for i, d in enumerate(dice)):
            state.rng_counter = counter
            return
        counter += 1


def force_draws(state: TableState, predicate: object, width: int = 2) -> None:
    """Move the generator to the first counter where `predicate(seed, counter)` holds."""
    counter = state.rng_counter
    while not predicate(state.rng_seed, counter):  # type: ignore[operator]
        counter += 1
    state.rng_counter = counter


def give(state: TableState, seat: int, *squares: int) -> None:
    """Make `seat` the owner of `squares` (bank-neutral: a test set-up, not a purchase)."""
    for sq in squares:
        state.owner[sq] = seat


def place(state: TableState, seat: int, square: int) -> None:
    state.players[seat].position = square


def current(state: TableState) -> int:
    return state.current


def set_cash(target: Table | TableState, seat: int, amount: int) -> None:
    """Hand-set a player's cash, booking the difference with the bank so the money invariant holds."""
    state = target.state if isinstance(target, Table) else target
    delta = amount - state.players[seat].cash
    state.players[seat].cash = amount
    if delta > 0:
        state.bank_out += delta
    else:
        state.bank_in -= delta


def refused(t: Table, command: object, rule: str) -> RuleViolation:
    """`command` raises RuleViolation(rule) and leaves the state and the event log untouched."""
    before = state_to_data(t.state)
    count = len(t.events)
    with pytest.raises(RuleViolation) as info:
        t.do(command)  # type: ignore[arg-type]
    assert info.value.rule == rule, info.value
    assert state_to_data(t.state) == before
    assert len(t.events) == count
    return info.value


def jail(t: Table, seat: int, turns: int = 0) -> None:
    """Put `seat` in jail with `turns` failed rolls behind them."""
    p = t.state.players[seat]
    p.in_jail = True
    p.position = 10
    p.jail_turns = turns


def roll_onto(t: Table, square: int, d1: int = 1, d2: int = 2) -> list[Event]:
    """The current player rolls d1+d2 from just the right square to land on `square`."""
    seat = t.state.current
    place(t.state, seat, (square - d1 - d2) % 40)
    force_dice(t.state, d1, d2)
    return t.do(Roll(seat))
