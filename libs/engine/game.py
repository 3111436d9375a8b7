"""The table's rules: start a game, apply a command, evolve an event, replay.

This module is the facade over the rule areas, one module each, which own an
area's checks, effects and event appliers (module docstrings list the rule IDs
each owns), above the shared turn-flow steps in flow.py:

    game  (this facade: new_game, apply, decide, check, legal_commands, evolve, replay)
    clock (E: ticks, time-outs, pauses)
    turn (G, X6)   delegated (A, T, K)
    jail (J)   properties (P1, H2)   buildings (P5-P10)   mortgages (M, X3)   debts (D)   decks (C)
    position (G10: a position set up from readable data; the builder is scenario.py, above this)
    flow (move, land, charge, bankrupt, end_turn; B1, G5-G7, P2-P4, D1-D5, A3)

Imports only go down this list. Each area registers a `COMMANDS` table
(command type -> check, effect) and an `EVENTS` table (event type -> applier);
this module merges them and sets the few steps flow.py calls upward (`flow.STEPS`).

One code path serves both uses of a command. `apply` checks the command
first (raising `RuleViolation` before anything changes) and then emits its
events one by one, each applied at once by `evolve`, so later steps of the
same command (a card after a move, a rent after a card) see the state they
follow from. `decide` runs `apply` on a copy, for callers that want the
events without the change. Replaying the events through `evolve` alone
rebuilds the same state, because `apply` never changes the state except
through `evolve`.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations
from typing import Final

from . import auction as auctions
from . import (
    buildings,
    casino,
    clock,
    debts,
    decks,
    delegated,
    flow,
    jail,
    mortgages,
    position,
    properties,
    rng,
    turn,
)
from .clock import next_deadline
from .commands import (
    AuctionMortgaged,
    Build,
    BuyProperty,
    ChooseBusMove,
    ChooseSquare,
    ClaimRent,
    Command,
    ConfirmBack,
    DeclineProperty,
    Demolish,
    EndTurn,
    LiftMortgage,
    Mortgage,
    Pay,
    PayJailFine,
    RequestPause,
    Roll,
    SellBuilding,
    Surrender,
    Tick,
    UseJailCard,
    VotePause,
)
from .config import TableConfig
from .delegated import EXTERNAL_COMMANDS, SYSTEM_COMMANDS, trade_window
from .errors import RuleViolation
from .events import BoardDealt, DeedsDealt, Event, TableCreated, TurnStarted
from .flow import (
    JAIL_SQUARE,
    MANAGE,
    OWNER_SALE,
    ApplyFn,
    CheckFn,
    Ctx,
    EffectFn,
    demolition_targets,
    owned,
    rent,
    rent_tax_percent,
    salary_paid,
    teammates,
)
from .state import BANK, Phase, PlayerState, TableState
from .trade import AcceptTrade, DeclineTrade
from .turn import SPEED_BUS, SPEED_FACES, SPEED_MR_MONOPOLY

__all__ = [
    "COMMAND_TYPES",
    "EVENT_TYPES",
    "EXTERNAL_COMMANDS",
    "JAIL_SQUARE",
    "SPEED_BUS",
    "SPEED_FACES",
    "SPEED_MR_MONOPOLY",
    "SYSTEM_COMMANDS",
    "apply",
    "check",
    "decide",
    "evolve",
    "initial_state",
    "legal_commands",
    "new_game",
    "next_deadline",
    "pause_commands",
    "rent",
    "rent_tax_percent",
    "replay",
    "salary_paid",
    "teammates",
    "trade_window",
]

#: The rule areas, bottom to top; each registers its commands and event appliers.
AREAS = (position, jail, properties, buildings, mortgages, debts, decks, turn, delegated, clock)

_RULES: Final[dict[type, tuple[CheckFn, EffectFn]]] = {}
_EVOLVE: Final[dict[type, ApplyFn]] = {}
for _area in AREAS:
    for _table, _merged in ((_area.COMMANDS, _RULES), (_area.EVENTS, _EVOLVE)):
        _twice = _table.keys() & _merged.keys()
        if _twice:  # pragma: no cover - a wiring mistake
            raise RuntimeError(f"{_area.__name__} registers {sorted(t.__name__ for t in _twice)} again")
        _merged.update(_table)
#: Commands whose `seat` is no player's move: the services' results (checked by their own rules) and the clock.
_SEATLESS: Final[frozenset[type]] = SYSTEM_COMMANDS | {Tick}

# The steps the shared flow hands up to an area (flow.py keeps no upward import).
flow.STEPS.draw_card = decks.draw_card
flow.STEPS.expire_mortgages = mortgages.expire_mortgages
flow.STEPS.mortgage_fee = mortgages.mortgage_fee
flow.STEPS.pause_if_agreed = clock.pause_if_agreed
flow.STEPS.resume_if_back = clock.resume_if_back

# Each event class applies itself: one attribute lookup instead of a dict lookup on its type per event.
for _cls, _fn in _EVOLVE.items():
    _cls._evolve = staticmethod(_fn)  # type: ignore[attr-defined]

#: Every event type the engine emits, by name (for serialization).
EVENT_TYPES: dict[str, type] = {cls.__name__: cls for cls in (TableCreated, *_EVOLVE)}
#: Every command type the engine takes, by name.
COMMAND_TYPES: dict[str, type] = {cls.__name__: cls for cls in _RULES}


# ---------------------------------------------------------------------------
# Starting a game and replaying one


#: The rule that sets each online mode's number of players (the printed rules': H1).
_PLAYERS_RULE: Final = {"classic": "X1", "speed": "X2", "duel": "X3", "team": "X4", "custom": "X5"}


def new_game(config: TableConfig, players: Sequence[str], seed: int) -> tuple[TableState, list[Event]]:
    """A new table: its creation events (G1 turn order, the shuffled deck, the first turn)."""
    n = len(players)
    if not config.min_players <= n <= config.max_players:
        rule = _PLAYERS_RULE.get(config.mode, "H1" if config.ruleset == "hasbro" else "X1")
        raise RuleViolation(rule, f"{config.mode} takes {config.min_players}-{config.max_players} players, not {n}")
    if config.deal_deeds_paid:
        dearest = sum(
            sorted((config.board.squares[sq].price for sq in config.board.purchasable), reverse=True)[
                : config.deal_deeds
            ]
        )
        if config.starting_cash < dearest:
            raise RuleViolation(
                "H3", f"dealt deeds may cost ${dearest}, more than the ${config.starting_cash} each player has"
            )
    created = TableCreated(config, seed, tuple(players))
    state = initial_state(created)
    ctx = Ctx(state)
    ctx.events.append(created)
    turn.set_turn_order(ctx)
    decks.shuffle_decks(ctx)
    if config.deal_deeds:  # H3, H4: so many deeds each, dealt in turn order
        squares = rng.shuffled(config.board.purchasable, state.rng_seed, state.rng_counter)
        dealt = squares[: config.deal_deeds * n]
        owners = tuple(state.order[i % n] for i in range(len(dealt)))
        prices = tuple(config.board.squares[sq].price if config.deal_deeds_paid else 0 for sq in dealt)
        ctx.emit(DeedsDealt(dealt, owners, prices))
    if config.deal_board:  # X3: dealt evenly at random, the remainder stays with the bank
        squares = rng.shuffled(config.board.purchasable, state.rng_seed, state.rng_counter)
        each = len(squares) // n
        dealt = squares[: each * n]
        ctx.emit(BoardDealt(dealt, tuple(state.order[i % n] for i in range(len(dealt)))))
    ctx.emit(TurnStarted(state.order[0], 1))
    return state, ctx.events


def initial_state(created: TableCreated) -> TableState:
    """The state right after `TableCreated` (seq 1), before any other event."""
    cfg = created.config
    return TableState(
        config=cfg,
        seed=created.seed,
        rng_seed=rng.table_seed(created.seed),
        rng_counter=0,
        players=[PlayerState(i, name, cfg.starting_cash) for i, name in enumerate(created.players)],
        order=list(range(len(created.players))),
        owner=[BANK] * 40,
        buildings=[0] * 40,
        mortgaged_round=[-1] * 40,
        deck=[],
        seq=1,
        missed=[0] * len(created.players),
    )


def replay(events: Sequence[Event]) -> TableState:
    """Rebuild a table's state from its events, from `TableCreated` on."""
    first = events[0]
    if not isinstance(first, TableCreated):
        raise ValueError("a table's events start with TableCreated")
    state = initial_state(first)
    for event in events[1:]:
        evolve(state, event)
    return state


# ---------------------------------------------------------------------------
# Commands


def apply(state: TableState, command: Command) -> list[Event]:
    """Check `command`, then change `state` by its events and return them.

    Raises `RuleViolation` (state unchanged) when the rules refuse it.
    """
    rule = _RULES.get(type(command))
    if rule is None:
        raise RuleViolation("G2", f"unknown command {type(command).__name__}")
    check, effect = rule
    _seat_checked(command)
    check(state, command)
    ctx = Ctx(state)
    effect(ctx, command)
    if state.mr_monopoly:
        turn.mr_monopoly(ctx)
    if state.auction is not None and state.auction.limits:  # an auction service's bid limits (A3)
        flow.refresh_auction_limits(ctx)
    return ctx.events


def decide(state: TableState, command: Command) -> list[Event]:
    """The events `command` would produce; `state` is left as it was."""
    return apply(state.copy(), command)


def check(state: TableState, command: Command) -> None:
    """Raise `RuleViolation` unless `command` is legal now."""
    rule = _RULES.get(type(command))
    if rule is None:
        raise RuleViolation("G2", f"unknown command {type(command).__name__}")
    _seat_checked(command)
    rule[0](state, command)


def _seat_checked(command: Command) -> None:
    """G1: a player's command names a seat by its number. Checked before any rule reads it: compiled
    (make compile), reading a non-int seat as the int it is declared raises TypeError instead."""
    seat: object = getattr(command, "seat", 0)  # untyped read: see clock._check_tick
    if type(seat) is not int and type(command) not in _SEATLESS:
        raise RuleViolation("G1", f"there is no seat {seat!r}")


def legal_commands(state: TableState, seat: int) -> list[Command]:
    """Every legal game move of `seat` now (while paused: confirming one is back).

    Pause requests and votes, open to every player at any time, come from
    `pause_commands`; leaving the game (R3's `Leave`, open to every active player
    at any time) is never listed, so no bot picks it as a move.

    Amount-valued commands are listed at their smallest legal value (a bid at
    the minimum); trade proposals are not listed (their terms are open).
    """
    if state.finished:
        return []
    if state.paused:
        return [ConfirmBack(seat)] if _passes(state, ConfirmBack(seat)) else []
    if seat != state.actor:
        return _out_of_turn_commands(state, seat)
    phase = state.phase
    candidates: list[Command] = []
    if phase is Phase.PRE_ROLL:
        candidates += [Roll(seat), PayJailFine(seat), UseJailCard(seat)]
        candidates += [Build(seat, sq) for sq in owned(state, seat)]
    elif phase is Phase.BUY:
        candidates += [BuyProperty(seat), DeclineProperty(seat)]
    elif phase is Phase.PAYMENT:
        candidates.append(Pay(seat))
    elif phase is Phase.AUCTION:
        assert state.auction is not None
        candidates += [auctions.Bid(seat, state.auction.min_bid), auctions.PassBid(seat)]
    elif phase is Phase.CASINO:
        picks = range(1, 7)
        for k in range(1, state.config.casino.max_numbers + 1):
            candidates += [casino.PlaceBet(seat, combo) for combo in combinations(picks, k)]
        candidates.append(casino.DeclineBet(seat))
    elif phase is Phase.TRADE:
        assert state.trade is not None
        candidates += [AcceptTrade(seat, state.trade.trade_id), DeclineTrade(seat, state.trade.trade_id)]
    elif phase is Phase.CHOICE:
        d1, d2 = state.dice
        if state.choice == "bus":
            candidates += [ChooseBusMove(seat, steps) for steps in sorted({d1, d2, d1 + d2})]
        elif state.choice == "triple":
            candidates += [ChooseSquare(seat, sq) for sq in range(40)]
        else:
            candidates += [Demolish(seat, sq) for sq in demolition_targets(state, seat)]
    elif phase is Phase.POST_ROLL:
        candidates.append(EndTurn(seat))
    if state.claim:
        candidates.append(ClaimRent(seat))
    if phase not in MANAGE and state.config.manage_any_time:
        for sq in owned(state, seat):
            candidates += [Build(seat, sq), SellBuilding(seat, sq), Mortgage(seat, sq), LiftMortgage(seat, sq)]
    if phase in OWNER_SALE:
        candidates += [AuctionMortgaged(seat, sq) for sq in owned(state, seat)]
    if phase in MANAGE:
        any_time = state.config.manage_any_time  # P10: building too, after the roll and while paying
        for sq in owned(state, seat):
            if any_time:
                candidates.append(Build(seat, sq))
            candidates += [SellBuilding(seat, sq), Mortgage(seat, sq), LiftMortgage(seat, sq)]
        candidates.append(Surrender(seat))
    return [command for command in candidates if _passes(state, command)]


def _out_of_turn_commands(state: TableState, seat: int) -> list[Command]:
    """P10, G9 (hasbro: managing property any time) and H2 (claiming rent) for a seat not to act."""
    cfg = state.config
    candidates: list[Command] = []
    if cfg.rent_claims:
        candidates.append(ClaimRent(seat))
    if cfg.manage_any_time:
        for sq in owned(state, seat):
            candidates += [Build(seat, sq), SellBuilding(seat, sq), Mortgage(seat, sq), LiftMortgage(seat, sq)]
    return [command for command in candidates if _passes(state, command)]


def pause_commands(state: TableState, seat: int) -> list[Command]:
    """E5: what `seat` may say about pausing now (asked of every player, not only the actor)."""
    candidates: list[Command] = [RequestPause(seat), VotePause(seat, True), VotePause(seat, False)]
    return [command for command in candidates if _passes(state, command)]


def _passes(state: TableState, command: Command) -> bool:
    try:
        check(state, command)
    except RuleViolation:
        return False
    return True


# ---------------------------------------------------------------------------
# Events


def evolve(state: TableState, event: Event) -> TableState:
    """Apply one event to `state` in place and return it (like python-chess's `push`)."""
    fn = _EVOLVE.get(type(event))
    if fn is None:
        raise TypeError(f"not a table event after creation: {type(event).__name__}")
    fn(state, event)
    state.seq += 1
    return state
