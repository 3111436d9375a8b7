"""Table events: the facts a game is made of, in the order they happened.

Every state change is one of these, applied by `evolve`. Randomness appears
as outcomes (dice, shuffled decks), so replaying never re-rolls. The events of
the auction, trade and casino sub-protocols live in their own modules.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from .board import Square
from .config import TableConfig
from .reasons import (
    BankPaidReason,
    BankruptCause,
    ChoiceKind,
    EndReason,
    JailExit,
    JailReason,
    PauseRejection,
    PaymentReason,
    TimeoutKind,
)


class Event:
    """Base of every event (table and sub-protocols).

    Events are values: never change one after it is made. They are plain
    slotted dataclasses rather than frozen ones because a frozen dataclass
    costs three times as much to build, and a game builds millions.

    The events of every turn spell out their `__init__` (`init=False`): the native build
    (make compile) compiles it to a direct constructor, where the one `dataclass` writes
    stays interpreted and cost a compiled event about 1,500 instructions, a sixth of a
    player-turn. tests/unit/engine/test_codec.py checks each against its fields.
    """

    __slots__ = ()
    #: `(state, event) -> None`: applies an event of this class to the state, set on each
    #: class by the rules (game.py). Declared so that the native build (make compile) lets
    #: the class take it.
    _evolve: ClassVar[Callable[..., None]]


@dataclass(slots=True)
class TableCreated(Event):
    config: TableConfig
    seed: int
    players: tuple[str, ...]

    # Facts of the config that analysts group by. The wire writes an event's properties as typed
    # fields too (docs/SCHEMA.md); a reader rebuilds them from the config, never reads them back.

    @property
    def ruleset(self) -> str:
        return self.config.ruleset

    @property
    def mode(self) -> str:
        return self.config.mode

    @property
    def board(self) -> str:
        return self.config.board.name

    @property
    def group_names(self) -> tuple[str, ...]:
        return self.config.board.group_names

    @property
    def squares(self) -> tuple[Square, ...]:
        return self.config.board.squares


@dataclass(slots=True)
class TurnOrderSet(Event):
    order: tuple[int, ...]  # G1: seats in turn order


@dataclass(slots=True)
class DeckShuffled(Event):
    deck: str
    cards: tuple[int, ...]  # the new draw pile, top first


@dataclass(slots=True, init=False)
class TurnStarted(Event):
    seat: int
    round: int

    def __init__(self, seat: int, round: int) -> None:
        self.seat = seat
        self.round = round


@dataclass(slots=True, init=False)
class DiceRolled(Event):
    seat: int
    d1: int
    d2: int
    #: X6: the speed die (0: not rolled; 1-3; 4 Mr. Monopoly; 5 Bus).
    speed: int = 0

    def __init__(self, seat: int, d1: int, d2: int, speed: int = 0) -> None:
        self.seat = seat
        self.d1 = d1
        self.d2 = d2
        self.speed = speed


@dataclass(slots=True, init=False)
class Moved(Event):
    seat: int
    from_square: int
    to_square: int

    def __init__(self, seat: int, from_square: int, to_square: int) -> None:
        self.seat = seat
        self.from_square = from_square
        self.to_square = to_square


@dataclass(slots=True, init=False)
class BankPaid(Event):
    """The bank pays a player: salary (G5), start bonus (G6), a card (C4)."""

    seat: int
    amount: int
    reason: BankPaidReason

    def __init__(self, seat: int, amount: int, reason: BankPaidReason) -> None:
        self.seat = seat
        self.amount = amount
        self.reason = reason


@dataclass(slots=True, init=False)
class PurchaseOffered(Event):
    seat: int
    square: int
    price: int

    def __init__(self, seat: int, square: int, price: int) -> None:
        self.seat = seat
        self.square = square
        self.price = price


@dataclass(slots=True, init=False)
class PropertyBought(Event):
    seat: int
    square: int
    price: int

    def __init__(self, seat: int, square: int, price: int) -> None:
        self.seat = seat
        self.square = square
        self.price = price


@dataclass(slots=True)
class PurchaseDeclined(Event):
    seat: int
    square: int


@dataclass(slots=True, init=False)
class PaymentDue(Event):
    debtor: int
    creditor: int  # seat or -1 (bank)
    amount: int
    reason: PaymentReason
    then_move: bool = False
    #: The part of `amount` that goes to the bank, not the creditor (E4 rent tax, X3 lifting cost).
    bank_share: int = 0
    #: The square the payment arose on (the rented or tax square, the card's, the jail, the
    #: auctioned or mortgaged square); -1: not recorded (events written before the field).
    square: int = -1

    def __init__(
        self,
        debtor: int,
        creditor: int,
        amount: int,
        reason: PaymentReason,
        then_move: bool = False,
        bank_share: int = 0,
        square: int = -1,
    ) -> None:
        self.debtor = debtor
        self.creditor = creditor
        self.amount = amount
        self.reason = reason
        self.then_move = then_move
        self.bank_share = bank_share
        self.square = square


@dataclass(slots=True, init=False)
class PaymentMade(Event):
    debtor: int
    creditor: int
    amount: int
    reason: PaymentReason
    bank_share: int = 0
    #: As PaymentDue.square: the square the payment arose on; -1: not recorded.
    square: int = -1

    def __init__(
        self, debtor: int, creditor: int, amount: int, reason: PaymentReason, bank_share: int = 0, square: int = -1
    ) -> None:
        self.debtor = debtor
        self.creditor = creditor
        self.amount = amount
        self.reason = reason
        self.bank_share = bank_share
        self.square = square


@dataclass(slots=True, init=False)
class CardDrawn(Event):
    seat: int
    deck: str
    card: int

    def __init__(self, seat: int, deck: str, card: int) -> None:
        self.seat = seat
        self.deck = deck
        self.card = card


@dataclass(slots=True)
class SentToJail(Event):
    seat: int
    reason: JailReason


@dataclass(slots=True)
class LeftJail(Event):
    seat: int
    how: JailExit
    fine: int = 0  # J2: a fine paid to the bank with this event


@dataclass(slots=True, init=False)
class BuildingBuilt(Event):
    seat: int
    square: int
    level: int
    cost: int

    def __init__(self, seat: int, square: int, level: int, cost: int) -> None:
        self.seat = seat
        self.square = square
        self.level = level
        self.cost = cost


@dataclass(slots=True, init=False)
class BuildingSold(Event):
    seat: int
    square: int
    level: int  # level after the sale
    refund: int

    def __init__(self, seat: int, square: int, level: int, refund: int) -> None:
        self.seat = seat
        self.square = square
        self.level = level
        self.refund = refund


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
    cause: BankruptCause = BankruptCause.DEBT


@dataclass(slots=True, init=False)
class TurnEnded(Event):
    seat: int

    def __init__(self, seat: int) -> None:
        self.seat = seat


@dataclass(slots=True)
class GameEnded(Event):
    winner: int
    places: tuple[int, ...]  # final place per seat, 1 = winner
    reason: EndReason
    game_ms: int = 0  # E6: game time played, pauses excluded
    scale: int = 1  # E6: the clock scale the game ran at


@dataclass(slots=True)
class ClockAdvanced(Event):
    """E6: the table's clock (game milliseconds since creation) moved on."""

    now: int


@dataclass(slots=True)
class TurnTimedOut(Event):
    """E2: the turn timer ran out; the game plays the rest of the turn by default."""

    seat: int
    missed: int  # timed-out turns in a row, this one included


@dataclass(slots=True)
class TimedOut(Event):
    """E1: a bid, a trade answer or a debt ran out of time; the default follows."""

    seat: int
    what: TimeoutKind


@dataclass(slots=True)
class PauseRequested(Event):
    seat: int


@dataclass(slots=True)
class PauseVoted(Event):
    seat: int
    yes: bool


@dataclass(slots=True)
class PauseRejected(Event):
    reason: PauseRejection


@dataclass(slots=True)
class GamePaused(Event):
    pass


@dataclass(slots=True)
class BackConfirmed(Event):
    seat: int


@dataclass(slots=True)
class ResumeScheduled(Event):
    at: int  # game ms when play resumes (E5 countdown)


@dataclass(slots=True)
class GameResumed(Event):
    paused_ms: int


@dataclass(slots=True)
class BoardDealt(Event):
    """X3: the purchasable squares dealt out at the start."""

    squares: tuple[int, ...]
    owners: tuple[int, ...]


@dataclass(slots=True)
class ChoiceOffered(Event):
    """A decision only the player can make: "bus", "triple" (X6) or "demolish" (C4 Duel)."""

    seat: int
    kind: ChoiceKind


@dataclass(slots=True)
class BusMoveChosen(Event):
    seat: int
    steps: int


@dataclass(slots=True)
class SquareChosen(Event):
    seat: int
    square: int


@dataclass(slots=True)
class BuildingDemolished(Event):
    seat: int  # the drawer
    square: int
    level: int  # level after the demolition


@dataclass(slots=True)
class MrMonopolyMoved(Event):
    """X6: after the move and its square, on to the nearest unowned (else opponent's) property."""

    seat: int
    square: int


# -- the hasbro rule set -------------------------------------------------------------


@dataclass(slots=True)
class DeedsDealt(Event):
    """H3, H4: deeds dealt at the start; each player pays `prices` (all 0 when free)."""

    squares: tuple[int, ...]
    owners: tuple[int, ...]
    prices: tuple[int, ...]


@dataclass(slots=True)
class DiceThrown(Event):
    """A throw of the dice that moves nobody and is no doubles: C1's nearest-utility card throw, or
    G1's (hasbro) opening throws that choose who starts (the players tied highest throw again)."""

    seat: int
    d1: int
    d2: int


@dataclass(slots=True)
class MortgageFeeDue(Event):
    """M4: a mortgaged square was received; the receiver pays `amount` (`Pay`) or lifts it now."""

    seat: int
    square: int
    amount: int


@dataclass(slots=True)
class BuildingsSoldDown(Event):
    """P8: a hotel sold while the bank lacks the houses to break it up: the group goes down only
    as far as the bank can supply, as evenly as P6 asks (`levels` per square, after)."""

    seat: int
    squares: tuple[int, ...]
    levels: tuple[int, ...]
    refund: int


@dataclass(slots=True)
class TradeCardsOffered(Event):
    """T2 (hasbro): the Get Out of Jail Free cards of the proposal just made."""

    trade_id: int
    give_cards: tuple[int, ...]
    take_cards: tuple[int, ...]


@dataclass(slots=True)
class JailCardsTraded(Event):
    """T2 (hasbro): the cards of an executed trade change hands."""

    trade_id: int
    proposer: int
    counterparty: int
    give_cards: tuple[int, ...]
    take_cards: tuple[int, ...]


@dataclass(slots=True)
class RentClaimable(Event):
    """H2: rent the owner may claim until the next player rolls."""

    payer: int
    owner: int
    square: int
    amount: int


@dataclass(slots=True)
class RentClaimed(Event):
    seat: int  # the owner


@dataclass(slots=True)
class RentClaimLapsed(Event):
    owner: int


@dataclass(slots=True)
class BuildingPlaced(Event):
    """P10: a building won at a building auction is put on a square (paid by the bid)."""

    seat: int
    square: int
    level: int


# -- scenarios -------------------------------------------------------------------------


@dataclass(slots=True)
class PositionSet(Event):
    """G10: a position set up from readable data (`engine.scenario`), not reached by play: the
    players, the board, the decks, the generator's position and the clock as they are to be.

    Tests, bot authors and support staff start a table from it (after `TableCreated`, before the
    first `TurnStarted`); play never emits it. Per-seat tuples follow `TableCreated.players`,
    per-square ones the 40 squares. The money set is booked with the bank, so the ledger holds.
    """

    order: tuple[int, ...]  # G1: seats in turn order
    cash: tuple[int, ...]  # per seat
    positions: tuple[int, ...]  # per seat: the square the token is on
    in_jail: tuple[bool, ...]  # per seat (J1)
    jail_turns: tuple[int, ...]  # per seat: failed rolls of this stay so far (J4)
    jail_cards: tuple[int, ...]  # C3: the ids of Get Out of Jail Free cards held ...
    jail_card_holders: tuple[int, ...]  # ... and the seat holding each
    bankrupt: tuple[int, ...]  # D5: seats out of the game, in order of elimination
    owners: tuple[int, ...]  # per square: seat, or -1 the bank
    buildings: tuple[int, ...]  # per square: 0-4 houses, 5 a hotel (P7)
    mortgaged_round: tuple[int, ...]  # per square: the round it was mortgaged in (M3), -1 none
    chance: tuple[int, ...]  # C1, C4: the chance draw pile, top first
    chest: tuple[int, ...]  # C2: the Community Chest draw pile, top first
    rng_counter: int  # G10: the generator's position: what the next dice will be
    clock: int  # E6: game ms since the table was created
    jackpot: int = 0  # K4: the casino pool
