"""Table events: the facts a game is made of, in the order they happened.

Every state change is one of these, applied by `evolve`. Randomness appears
as outcomes (dice, shuffled decks), so replaying never re-rolls. The events of
the auction, trade and casino sub-protocols live in their own modules.
"""

from __future__ import annotations

from dataclasses import dataclass

from .config import TableConfig


class Event:
    """Base of every event (table and sub-protocols).

    Events are values: never change one after it is made. They are plain
    slotted dataclasses rather than frozen ones because a frozen dataclass
    costs three times as much to build, and a game builds millions.
    """

    __slots__ = ()


@dataclass(slots=True)
class TableCreated(Event):
    config: TableConfig
    seed: int
    players: tuple[str, ...]


@dataclass(slots=True)
class TurnOrderSet(Event):
    order: tuple[int, ...]  # G1: seats in turn order


@dataclass(slots=True)
class DeckShuffled(Event):
    deck: str
    cards: tuple[int, ...]  # the new draw pile, top first


@dataclass(slots=True)
class TurnStarted(Event):
    seat: int
    round: int


@dataclass(slots=True)
class DiceRolled(Event):
    seat: int
    d1: int
    d2: int


@dataclass(slots=True)
class Moved(Event):
    seat: int
    from_square: int
    to_square: int


@dataclass(slots=True)
class BankPaid(Event):
    """The bank pays a player: salary (G5), start bonus (G6), a card (C4)."""

    seat: int
    amount: int
    reason: str


@dataclass(slots=True)
class PurchaseOffered(Event):
    seat: int
    square: int
    price: int


@dataclass(slots=True)
class PropertyBought(Event):
    seat: int
    square: int
    price: int


@dataclass(slots=True)
class PurchaseDeclined(Event):
    seat: int
    square: int


@dataclass(slots=True)
class PaymentDue(Event):
    debtor: int
    creditor: int  # seat or -1 (bank)
    amount: int
    reason: str
    then_move: bool = False


@dataclass(slots=True)
class PaymentMade(Event):
    debtor: int
    creditor: int
    amount: int
    reason: str


@dataclass(slots=True)
class CardDrawn(Event):
    seat: int
    deck: str
    card: int


@dataclass(slots=True)
class SentToJail(Event):
    seat: int
    reason: str  # "go_to_jail" | "card" | "third_doubles"


@dataclass(slots=True)
class LeftJail(Event):
    seat: int
    how: str  # "fine" | "card" | "doubles" | "forced_fine" (J4, paid by a PaymentMade before)
    fine: int = 0  # J2: a fine paid to the bank with this event


@dataclass(slots=True)
class BuildingBuilt(Event):
    seat: int
    square: int
    level: int
    cost: int


@dataclass(slots=True)
class BuildingSold(Event):
    seat: int
    square: int
    level: int  # level after the sale
    refund: int


@dataclass(slots=True)
class PropertyMortgaged(Event):
    seat: int
    square: int
    amount: int


@dataclass(slots=True)
class MortgageLifted(Event):
    seat: int
    square: int
    cost: int


@dataclass(slots=True)
class MortgageExpired(Event):
    seat: int
    square: int


@dataclass(slots=True)
class PlayerBankrupt(Event):
    seat: int
    creditor: int  # seat or -1 (bank)
    place: int


@dataclass(slots=True)
class TurnEnded(Event):
    seat: int


@dataclass(slots=True)
class GameEnded(Event):
    winner: int
    places: tuple[int, ...]  # final place per seat, 1 = winner
    reason: str  # "last_player" | "round_cap"
