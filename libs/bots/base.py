"""What every bot is: a chooser of one command for a seat at a state."""

from __future__ import annotations

from typing import Protocol

from engine import Command, TableState


class Bot(Protocol):
    def __init__(self, seed: int) -> None: ...

    def choose(self, state: TableState, seat: int) -> Command:
        """A command for `seat`, which must be `state.actor`."""
        ...
