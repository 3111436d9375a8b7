"""Scenarios: a table's position from readable data, as events that replay (G10).

Like a chess FEN, a `Scenario` says where everything is: who owns what, the buildings and
mortgages, cash, tokens, jail, the decks, the round, the clock and the next dice. Its `events()`
are what a table would store: `TableCreated`, one `PositionSet`, then the `TurnStarted` of the
player to move, so `replay(scenario.events())` rebuilds the position and play goes on from it
through the normal rules (`apply`), with every later event replaying too.

Why one `PositionSet` event and not a sequence of existing ones: each existing event carries
its rule's side effects (`PropertyBought` charges the price, `BuildingBuilt` the cost and P9's
count, `DeckShuffled` advances the generator, `SentToJail` starts a stay at zero failed rolls),
so composing an arbitrary position from them would take compensating payments and an invented
history, and some of a position has no event at all (the generator's counter, a stay's failed
rolls, a clock moved without its timers firing). One event stating the position replays as
exactly and says what it is: a set-up, not play.

The next dice: `dice=((3, 4),)` sets the generator's counter (`rng_counter`) to the first one
whose draws give those rolls (`dice_counter`), so the engine rolls them through its own
generator: nothing is patched, and the replay rolls the same. Each roll takes two draws (three
once the speed die is in play, X6: pass `draws_per_roll=3`).

Squares are board indexes or names ("Boardwalk"), players seat indexes or names; a hotel is
level 5. A position that breaks an invariant (buildings on a split or mortgaged group, uneven
building, more houses than the bank holds, a card in two places) raises `ValueError`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from . import rng
from .config import TableConfig, preset
from .events import Event, PositionSet, TableCreated, TurnStarted
from .game import initial_state, replay
from .invariants import InvariantBroken, check_invariants
from .state import BANK, TableState

#: A square: its board index (0-39) or its name on the board.
SquareRef = int | str
#: A player: the seat index or the name given in `players`.
SeatRef = int | str


@dataclass(frozen=True)
class Scenario:
    """A position to start a table from; every field but `players` has a default (the start)."""

    players: tuple[str, ...]
    #: A preset name (`engine.PRESETS`), or the config itself in `config`.
    mode: str = "classic"
    config: TableConfig | None = None
    seed: int = 0
    #: The player whose turn starts, and the round it is in.
    turn: SeatRef = 0
    round: int = 1
    #: G1: the turn order (default: the seating, 0, 1, 2...).
    order: tuple[SeatRef, ...] = ()
    cash: Mapping[SeatRef, int] = field(default_factory=dict)  # default: the starting cash
    positions: Mapping[SeatRef, SquareRef] = field(default_factory=dict)  # default: Start
    owners: Mapping[SeatRef, Iterable[SquareRef]] = field(default_factory=dict)
    #: Square -> 1-4 houses or 5 a hotel.
    buildings: Mapping[SquareRef, int] = field(default_factory=dict)
    #: Mortgaged squares; a mapping gives the round each was mortgaged in (M3), else `round`.
    mortgaged: Iterable[SquareRef] | Mapping[SquareRef, int] = ()
    #: Players in jail -> failed rolls of this stay so far (0-2).
    jail: Mapping[SeatRef, int] = field(default_factory=dict)
    #: Players -> the ids of the Get Out of Jail Free cards they hold (out of their decks).
    jail_cards: Mapping[SeatRef, Iterable[int]] = field(default_factory=dict)
    #: Players already out, in order of elimination (they hold nothing).
    bankrupt: tuple[SeatRef, ...] = ()
    #: Draw piles, top first, as card ids (default: each deck in id order, held cards left out).
    chance: tuple[int, ...] | None = None
    chest: tuple[int, ...] | None = None
    #: E6: game ms since the table was created.
    clock_ms: int = 0
    jackpot: int = 0
    #: The next rolls, in order; or the generator's counter itself in `counter`.
    dice: tuple[tuple[int, int], ...] = ()
    counter: int | None = None
    draws_per_roll: int = 2

    def table_config(self) -> TableConfig:
        return self.config if self.config is not None else preset(self.mode)

    def events(self) -> list[Event]:
        """The table's first events: `TableCreated`, `PositionSet`, `TurnStarted`."""
        cfg = self.table_config()
        created = TableCreated(cfg, self.seed, tuple(self.players))
        base = initial_state(created)
        seat = self._seat
        n = len(self.players)
        owners = [BANK] * 40
        for who, squares in self.owners.items():
            for sq in squares:
                owners[self._square(cfg, sq)] = seat(who)
        buildings = [0] * 40
        for sq, level in self.buildings.items():
            buildings[self._square(cfg, sq)] = level
        mortgaged = [-1] * 40
        rounds = self.mortgaged if isinstance(self.mortgaged, Mapping) else dict.fromkeys(self.mortgaged, self.round)
        for sq, mortgaged_in in rounds.items():
            mortgaged[self._square(cfg, sq)] = mortgaged_in
        cash = [cfg.starting_cash] * n
        for who, amount in self.cash.items():
            cash[seat(who)] = amount
        positions = [0] * n
        for who, sq in self.positions.items():
            positions[seat(who)] = self._square(cfg, sq)
        in_jail, jail_turns = [False] * n, [0] * n
        for who, turns in self.jail.items():
            in_jail[seat(who)], jail_turns[seat(who)] = True, turns
            if who not in self.positions:
                positions[seat(who)] = 10  # J1: the jail square
        cards = [(card, seat(who)) for who, held in self.jail_cards.items() for card in held]
        held_ids = {card for card, _ in cards}
        chance = self.chance if self.chance is not None else self._pile(cfg.chance_deck, held_ids)
        chest = self.chest if self.chest is not None else self._pile(cfg.chest_deck, held_ids)
        counter = self.counter
        if counter is None:
            counter = dice_counter(base.rng_seed, self.dice, draws_per_roll=self.draws_per_roll) if self.dice else 0
        order = tuple(seat(who) for who in self.order) if self.order else tuple(range(n))
        position = PositionSet(
            order=order,
            cash=tuple(cash),
            positions=tuple(positions),
            in_jail=tuple(in_jail),
            jail_turns=tuple(jail_turns),
            jail_cards=tuple(card for card, _ in cards),
            jail_card_holders=tuple(holder for _, holder in cards),
            bankrupt=tuple(seat(who) for who in self.bankrupt),
            owners=tuple(owners),
            buildings=tuple(buildings),
            mortgaged_round=tuple(mortgaged),
            chance=tuple(chance),
            chest=tuple(chest),
            rng_counter=counter,
            clock=self.clock_ms,
            jackpot=self.jackpot,
        )
        events: list[Event] = [created, position, TurnStarted(seat(self.turn), self.round)]
        try:
            check_invariants(replay(events))
        except InvariantBroken as exc:
            raise ValueError(f"not a position the rules allow: {exc}") from None
        return events

    def state(self) -> TableState:
        """The position's table state (the replay of `events()`)."""
        return replay(self.events())

    def _seat(self, who: SeatRef) -> int:
        if isinstance(who, str):
            if who not in self.players:
                raise ValueError(f"no player {who!r}; the players are {', '.join(self.players)}")
            return self.players.index(who)
        if not 0 <= who < len(self.players):
            raise ValueError(f"no seat {who}: seats are 0-{len(self.players) - 1}")
        return who

    @staticmethod
    def _square(cfg: TableConfig, sq: SquareRef) -> int:
        squares = cfg.board.squares
        if isinstance(sq, str):
            for square in squares:
                if square.name.lower() == sq.lower():
                    return square.index
            raise ValueError(f"no square named {sq!r} on the {cfg.board.name} board")
        if not 0 <= sq < 40:
            raise ValueError(f"no square {sq}: squares are 0-39 (B1)")
        return sq

    @staticmethod
    def _pile(deck: Sequence[object], held: set[int]) -> tuple[int, ...]:
        return tuple(card.id for card in deck if card.id not in held)  # type: ignore[attr-defined]


def dice_counter(
    rng_seed: int, rolls: Sequence[tuple[int, int]], start: int = 0, draws_per_roll: int = 2, limit: int = 10_000_000
) -> int:
    """The first generator counter from `start` on whose draws give `rolls` in order (G10).

    `rng_seed` is the table's (`TableState.rng_seed`). A roll reads the two dice from draws
    `counter` and `counter + 1` and moves the counter on by `draws_per_roll`; each wanted roll
    costs about 36 tries, so a few rolls in a row are found at once.
    """
    for counter in range(start, start + limit):
        if all(rng.dice(rng_seed, counter + i * draws_per_roll) == (d1, d2) for i, (d1, d2) in enumerate(rolls)):
            return counter
    raise ValueError(f"no counter in {start}-{start + limit} gives the rolls {list(rolls)}")


__all__ = ["Scenario", "dice_counter"]
