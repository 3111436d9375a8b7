"""The trade sub-protocol (T1-T5) as pure functions over the table state.

`validate_terms` is the whole T2-T5 check; the table uses it when a trade
is proposed and again when it is accepted, and the trade service uses the
same function on its projection of the table.
"""

from __future__ import annotations

from dataclasses import dataclass

from mypy_extensions import mypyc_attr

from .board import Kind
from .commands import Command
from .errors import RuleViolation
from .events import Event
from .state import TableState, TradeOffer


@mypyc_attr(native_class=False)  # a command takes any value: the rules refuse wrong types
@dataclass(slots=True)
class ProposeTrade(Command):
    seat: int
    counterparty: int
    give_cash: int = 0
    give_squares: tuple[int, ...] = ()
    take_cash: int = 0
    take_squares: tuple[int, ...] = ()
    #: T2 (hasbro, `TradeRules.jail_cards`): Get Out of Jail Free cards (ids) on each side.
    give_cards: tuple[int, ...] = ()
    take_cards: tuple[int, ...] = ()


@mypyc_attr(native_class=False)  # a command takes any value: the rules refuse wrong types
@dataclass(slots=True)
class AcceptTrade(Command):
    seat: int
    trade_id: int


@mypyc_attr(native_class=False)  # a command takes any value: the rules refuse wrong types
@dataclass(slots=True)
class DeclineTrade(Command):
    seat: int
    trade_id: int


@mypyc_attr(native_class=False)  # a command takes any value: the rules refuse wrong types
@dataclass(slots=True)
class ExecuteTrade(Command):
    """A trade the counterparty accepted at a trade service (external trades).

    Sent by the platform, never by a player. The table re-checks it: the
    proposal lapses with the turn (`turn_no`) or when its window (T1) is over,
    and the terms must still be legal (T2-T5) and stand as offered (T2: no
    traded square mortgaged or lifted since the proposal).
    """

    seat: int  # the proposer
    trade_id: int
    counterparty: int
    turn_no: int
    give_cash: int = 0
    give_squares: tuple[int, ...] = ()
    take_cash: int = 0
    take_squares: tuple[int, ...] = ()
    give_cards: tuple[int, ...] = ()  # T6 (hasbro): Get Out of Jail Free cards
    take_cards: tuple[int, ...] = ()
    #: T2: the traded squares that were mortgaged when the proposal was made; with
    #: `mortgages_recorded`, exactly these must be mortgaged now (False: sent before the check).
    mortgaged_squares: tuple[int, ...] = ()
    mortgages_recorded: bool = False


@dataclass(slots=True)
class TradeProposed(Event):
    trade_id: int
    proposer: int
    counterparty: int
    give_cash: int
    give_squares: tuple[int, ...]
    take_cash: int
    take_squares: tuple[int, ...]


@dataclass(slots=True)
class TradeExecuted(Event):
    trade_id: int
    proposer: int
    counterparty: int
    give_cash: int
    give_squares: tuple[int, ...]
    take_cash: int
    take_squares: tuple[int, ...]


@dataclass(slots=True)
class TradeDeclined(Event):
    trade_id: int
    seat: int


def offer_of(trade_id: int, cmd: ProposeTrade | ExecuteTrade) -> TradeOffer:
    """The terms of a proposal (or of a trade a service agreed), checked for shape (T2).

    The fields are read untyped (`getattr`) and checked before the offer is built: compiled (make
    compile), a typed read of a list where a tuple is declared, or of a non-int, raises TypeError before
    the rule could refuse it (as clock._check_tick)."""
    sides = [getattr(cmd, name) for name in ("give_squares", "take_squares", "give_cards", "take_cards")]
    if not all(isinstance(side, (tuple, list)) for side in sides[:2]):
        raise RuleViolation("T2", "the squares of each side are a list")
    if not all(isinstance(side, (tuple, list)) for side in sides[2:]):
        raise RuleViolation("T2", "the cards of each side are a list")
    give_squares, take_squares, give_cards, take_cards = (tuple(side) for side in sides)
    numbers = (getattr(cmd, "counterparty"), getattr(cmd, "give_cash"), getattr(cmd, "take_cash"))  # noqa: B009
    if any(type(n) is not int for n in (*numbers, *give_squares, *take_squares, *give_cards, *take_cards)):
        raise RuleViolation("T2", "seats, cash, squares and cards in a trade are whole numbers")
    return TradeOffer(
        trade_id,
        cmd.seat,
        cmd.counterparty,
        cmd.give_cash,
        give_squares,
        cmd.take_cash,
        take_squares,
        give_cards,
        take_cards,
    )


def side_value(state: TableState, cash: int, squares: tuple[int, ...]) -> int:
    """T5: money plus printed prices."""
    board = state.config.board.squares
    return cash + sum(board[sq].price for sq in squares)


def validate_terms(state: TableState, offer: TradeOffer, teammates: bool = False) -> None:
    """Raise `RuleViolation` unless the terms are a legal trade in `state` (T2-T5)."""
    proposer, other = offer.proposer, offer.counterparty  # whole numbers: `offer_of` checked them
    players = state.players
    if other == proposer:
        raise RuleViolation("T2", "a trade needs two different players")
    if not 0 <= other < len(players) or players[other].bankrupt:
        raise RuleViolation("T2", f"seat {other} is not an active player")
    if offer.give_cash < 0 or offer.take_cash < 0:
        raise RuleViolation("T2", "cash in a trade cannot be negative")
    cards = offer.give_cards + offer.take_cards
    if not (offer.give_cash or offer.take_cash or offer.give_squares or offer.take_squares or cards):
        raise RuleViolation("T2", "an empty trade")
    if cards:  # T2 (hasbro): Get Out of Jail Free cards held by their side
        if not state.config.trade.jail_cards:
            raise RuleViolation("T2", "Get Out of Jail Free cards are not traded in this rule set")
        if len(set(cards)) != len(cards):
            raise RuleViolation("T2", "a card appears twice in the trade")
        for side_cards, holder in ((offer.give_cards, proposer), (offer.take_cards, other)):
            for card in side_cards:
                if card not in players[holder].jail_cards:
                    raise RuleViolation("T2", f"seat {holder} holds no Get Out of Jail Free card {card}")
    if offer.give_cash > players[proposer].cash:
        raise RuleViolation("T2", f"seat {proposer} has only ${players[proposer].cash}")
    if offer.take_cash > players[other].cash:
        raise RuleViolation("T2", f"seat {other} has only ${players[other].cash}")
    squares = offer.give_squares + offer.take_squares
    if len(set(squares)) != len(squares):
        raise RuleViolation("T2", "a square appears twice in the trade")
    board = state.config.board.squares
    cfg = state.config.trade
    for side, owner in ((offer.give_squares, proposer), (offer.take_squares, other)):
        for sq in side:
            if not 0 <= sq < len(board) or not board[sq].purchasable:
                raise RuleViolation("T2", f"square {sq} is not a property")
            if state.owner[sq] != owner:
                raise RuleViolation("T2", f"{board[sq].name} is not owned by seat {owner}")
            if board[sq].kind is Kind.PROPERTY and state.group_has_buildings(board[sq].group):
                raise RuleViolation("T3", f"{board[sq].name}'s colour group has buildings: sell them first")
            if state.mortgaged_round[sq] >= 0 and not (cfg.mortgaged_tradeable or teammates):
                raise RuleViolation("T4", f"{board[sq].name} is mortgaged and cannot be traded")
    if cfg.min_balance_percent is not None and not teammates:
        give = side_value(state, offer.give_cash, offer.give_squares)
        take = side_value(state, offer.take_cash, offer.take_squares)
        small, large = min(give, take), max(give, take)
        if small * 100 < large * cfg.min_balance_percent:
            raise RuleViolation(
                "T5",
                f"unbalanced trade: ${small} against ${large} (the smaller side must be "
                f"at least {cfg.min_balance_percent}% of the larger)",
            )


def apply_offer(state: TableState, offer: TradeOffer | TradeExecuted) -> None:
    """Move the cash and properties of an executed trade, in place."""
    players = state.players
    p, o = players[offer.proposer], players[offer.counterparty]
    p.cash += offer.take_cash - offer.give_cash
    o.cash += offer.give_cash - offer.take_cash
    for sq in offer.give_squares:
        state.owner[sq] = offer.counterparty
    for sq in offer.take_squares:
        state.owner[sq] = offer.proposer
