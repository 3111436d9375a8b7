"""The simulator's game loop: the seat to act chooses, the engine applies, until the game ends.

Kept apart from `runner` (the runs, the summary, the events hash) so that the native build compiles
it with the engine and the bots (setup.py): interpreted, its dozen lines per command cost a game as
much as the engine's own checks did.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from bots import Bot
from engine import ClaimRent, ConfirmBack, Event, Roll, TableState, Tick, apply, next_deadline

#: Landing statistics: squares 0-39, then "in jail" apart from square 10 (just visiting).
JAIL_STATE = 40


def play_out(
    state: TableState,
    seat_bots: list[Bot],
    played: list[Event],
    show: Callable[[TableState, list[Event]], None] | None,
    think_ms: int,
    leave_rate: float,
    chance: random.Random,
    landing: list[int] | None,
    max_commands: int,
) -> tuple[int, int]:
    """Play `state` to its end, appending every event to `played` (and showing each command's to
    `show`); the bots' commands and dice rolls, counted.

    With `think_ms`, the game runs on a virtual clock: before each decision the clock moves on by
    the bot's thinking time (a `Tick`). A player who left (`leave_rate`, drawn from `chance`) is
    never asked again; the clock jumps to its deadlines instead. With `landing`, where each roll
    leaves the token is counted there (`observe_roll`)."""
    rolling = -1  # the seat whose roll is still being resolved
    claims = state.config.rent_claims
    extras = landing is not None or claims  # one check per command when neither is on
    gone = [False] * len(state.players)
    commands = rolls = 0
    now = 0
    while not state.finished:
        if think_ms:
            if state.paused:  # every bot comes back at once
                for seat in state.active_seats:
                    if seat not in state.back and state.resume_at < 0:
                        _record(state, apply(state, ConfirmBack(seat)), played, show)
                due = next_deadline(state)
                now = max(now, due if due is not None else now)
                _record(state, apply(state, Tick(now)), played, show)
                continue
            seat = state.actor
            if gone[seat]:
                due = next_deadline(state)
                assert due is not None
                now = max(now, due)
            else:
                now += think_ms
            new = apply(state, Tick(now))
            if new:
                _record(state, new, played, show)
                if state.finished or state.actor != seat or gone[seat]:
                    continue
            if leave_rate and chance.random() < leave_rate:
                gone[seat] = True
                continue
        seat = state.actor
        command = seat_bots[seat].choose(state, seat)
        new = apply(state, command)
        commands += 1
        if type(command) is Roll:
            rolls += 1
            rolling = seat
        _record(state, new, played, show)
        if extras:
            if landing is not None and rolling >= 0:
                rolling = observe_roll(state, rolling, landing)
            while claims and state.claim and not state.finished:  # H2: the owners always claim in time
                _record(state, apply(state, ClaimRent(state.claim[1])), played, show)
        if commands >= max_commands:
            raise RuntimeError(f"game seed {state.seed} did not end within {max_commands} commands")
    return commands, rolls


def _record(
    state: TableState, new: list[Event], played: list[Event], show: Callable[[TableState, list[Event]], None] | None
) -> None:
    played.extend(new)
    if show is not None:
        show(state, new)


def observe_roll(state: TableState, seat: int, landing: list[int]) -> int:
    """Count the roll of `seat` once its move is resolved; the seat still rolling, or -1."""
    player = state.players[seat]
    if player.bankrupt:  # the roll's square (rent, tax, card) ended the game for the player there
        landing[player.position] += 1
        return -1
    if state.choice or any(p.then_move and p.debtor == seat for p in state.payments):
        return seat  # J4's forced fine (or a choice) still holds the move
    landing[JAIL_STATE if player.in_jail else player.position] += 1
    return -1
