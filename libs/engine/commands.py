"""Table commands: what a player (or the table service for them) asks for.

Each names the acting seat; `decide`/`apply` check it is that seat's turn
to act. The commands of the auction, trade and casino sub-protocols live in
their own modules.
"""

from __future__ import annotations

from dataclasses import dataclass


class Command:
    """Base of every command (table and sub-protocols); a value, like `Event`."""

    __slots__ = ()
    seat: int


@dataclass(slots=True)
class Roll(Command):
    seat: int


@dataclass(slots=True)
class BuyProperty(Command):
    seat: int


@dataclass(slots=True)
class DeclineProperty(Command):
    seat: int


@dataclass(slots=True)
class Pay(Command):
    seat: int


@dataclass(slots=True)
class PayJailFine(Command):
    seat: int


@dataclass(slots=True)
class UseJailCard(Command):
    seat: int


@dataclass(slots=True)
class Build(Command):
    seat: int
    square: int


@dataclass(slots=True)
class SellBuilding(Command):
    seat: int
    square: int


@dataclass(slots=True)
class Mortgage(Command):
    seat: int
    square: int


@dataclass(slots=True)
class LiftMortgage(Command):
    seat: int
    square: int


@dataclass(slots=True)
class EndTurn(Command):
    seat: int


@dataclass(slots=True)
class Surrender(Command):
    seat: int


@dataclass(slots=True)
class Leave(Command):
    """R3: leave the game, at any time, in turn or not; it counts as bankruptcy to the bank."""

    seat: int


@dataclass(slots=True)
class Tick(Command):
    """E6: the table's clock reads `now` (game ms); due timers fire (E1, E2, E5)."""

    now: int
    seat: int = -1


@dataclass(slots=True)
class RequestPause(Command):
    seat: int


@dataclass(slots=True)
class VotePause(Command):
    seat: int
    yes: bool


@dataclass(slots=True)
class ConfirmBack(Command):
    seat: int


@dataclass(slots=True)
class ChooseBusMove(Command):
    seat: int
    steps: int


@dataclass(slots=True)
class ChooseSquare(Command):
    seat: int
    square: int


@dataclass(slots=True)
class Demolish(Command):
    seat: int
    square: int


@dataclass(slots=True)
class AuctionMortgaged(Command):
    """X3: put one's own mortgaged property to auction at once."""

    seat: int
    square: int


@dataclass(slots=True)
class ClaimRent(Command):
    """H2: the owner claims the rent due to them before the next player rolls."""

    seat: int
