"""The casino sub-protocol (K1-K4): a bet, one die, an independent jackpot draw.

The outcome is a pure function of the bet and two draws, so the casino
service (its own generator) and the embedded table (the table's generator)
settle bets with the same code, and a recorded bet can be re-verified.
"""

from __future__ import annotations

from dataclasses import dataclass

from mypy_extensions import mypyc_attr

from . import rng
from .commands import Command
from .config import CasinoRules
from .errors import RuleViolation
from .events import Event


@mypyc_attr(native_class=False)  # a command takes any value: the rules refuse wrong types
@dataclass(slots=True)
class PlaceBet(Command):
    seat: int
    numbers: tuple[int, ...]


@mypyc_attr(native_class=False)  # a command takes any value: the rules refuse wrong types
@dataclass(slots=True)
class DeclineBet(Command):
    seat: int


@mypyc_attr(native_class=False)  # a command takes any value: the rules refuse wrong types
@dataclass(slots=True)
class SettleBet(Command):
    """A casino service's settled bet (external casino): sent by the platform, never by a player.

    `numbers` empty: the player declined (or let the time run out).
    """

    seat: int
    bet_id: str
    numbers: tuple[int, ...]
    die: int
    jackpot_hit: bool


@dataclass(slots=True)
class CasinoOpened(Event):
    seat: int
    #: For a casino service (external casino only): the bettor's cash (the stake must be covered)
    #: and the game ms by which they bet or decline (the turn timer, E1).
    cash: int = 0
    deadline: int = -1


@dataclass(slots=True)
class BetPlaced(Event):
    seat: int
    numbers: tuple[int, ...]
    stake: int  # paid to the bank
    pool_add: int  # K4: bank money added to the jackpot pool


@dataclass(slots=True)
class BetSettled(Event):
    seat: int
    numbers: tuple[int, ...]
    die: int
    jackpot_hit: bool
    payout: int  # K2: paid by the bank (includes the stake)
    jackpot: int  # K3: the pool paid out
    draws: int  # generator draws consumed from the table's stream (0 when drawn elsewhere)


@dataclass(slots=True)
class BetDeclined(Event):
    seat: int


DRAWS_PER_BET = 2


_FACES = (1, 2, 3, 4, 5, 6)


def check_numbers(numbers: tuple[int, ...], rules: CasinoRules) -> None:
    # The numbers are read untyped: compiled (make compile), an int-typed read of "1" would raise
    # TypeError, and of True would read 1, before the rule could refuse either.
    picked: tuple[object, ...] = numbers
    if not isinstance(picked, (tuple, list)) or not 1 <= len(picked) <= rules.max_numbers:
        raise RuleViolation("K1", f"pick 1 to {rules.max_numbers} numbers")
    if len(set(picked)) != len(picked) or any(type(n) is not int or n not in _FACES for n in picked):
        raise RuleViolation("K1", "the numbers must be distinct, from 1 to 6")


def draw(seed: int, counter: int, rules: CasinoRules) -> tuple[int, bool]:
    """The die (K2) and the independent jackpot draw (K3) from two draws."""
    die = rng.die(seed, counter)
    jackpot_hit = rng.below(seed, counter + 1, rules.jackpot_odds) == 0
    return die, jackpot_hit


def payout(numbers: tuple[int, ...], die: int, rules: CasinoRules) -> int:
    """K2: a hit pays payout_base / K, stake included."""
    return rules.payout_base // len(numbers) if die in numbers else 0


def settle(
    seat: int, numbers: tuple[int, ...], die: int, jackpot_hit: bool, pool: int, rules: CasinoRules, draws: int
) -> BetSettled:
    """The settlement of a bet once the pool already holds this bet's addition."""
    return BetSettled(seat, numbers, die, jackpot_hit, payout(numbers, die, rules), pool if jackpot_hit else 0, draws)
