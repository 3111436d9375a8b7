"""Rule sets and modes as data: one `TableConfig` drives every rule switch.

The engine never asks "which mode is this?"; it reads the amounts and
switches below. A mode is a preset of this config (X1 Classic here; the
other online modes and the hasbro rule set are further presets).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from .board import Board, online_board
from .cards import Card, online_chance_deck


@dataclass(frozen=True, slots=True)
class AuctionRules:
    #: A1: the first bid is at least the printed price (True) or `min_first_bid`.
    start_at_price: bool = True
    min_first_bid: int = 0
    #: A1: each bid at least this much above the last.
    increment: int = 100
    #: A1: the player who declined does not bid.
    decliner_excluded: bool = True


@dataclass(frozen=True, slots=True)
class TradeRules:
    #: T1: proposals allowed per turn (None: no limit).
    max_proposals_per_turn: int | None = 3
    #: T5: the smaller side must be worth at least this fraction (percent) of the larger.
    min_balance_percent: int | None = 50
    #: T4: mortgaged properties may be traded (online: only between teammates).
    mortgaged_tradeable: bool = False


@dataclass(frozen=True, slots=True)
class CasinoRules:
    enabled: bool = True
    stake: int = 1000  # K1
    payout_base: int = 6000  # K2: a hit pays payout_base / K
    jackpot_odds: int = 20  # K3: 1 in this many
    pool_per_bet: int = 500  # K4: bank money added per bet
    max_numbers: int = 3  # K1


@dataclass(frozen=True, slots=True)
class ClockRules:
    """E1-E6: every timer and time rule, in game seconds and game minutes."""

    turn_seconds: int = 75  # E1 (60 s thinking + 15 s animation)
    bid_seconds: int = 20  # E1, A1
    debt_seconds: int = 60  # E1, D1
    missed_turns_limit: int = 3  # E2: timed-out turns in a row before bankruptcy
    salary_stop_minute: int | None = 46  # E3 (None: never)
    tax_start_minute: int | None = 61  # E4 (None: never)
    tax_start_percent: int = 50
    tax_step_percent: int = 10
    tax_step_minutes: int = 5
    tax_max_percent: int = 99
    pause_vote_seconds: int = 30  # E5
    resume_countdown_seconds: int = 3  # E5 (decision)
    #: E6: game seconds per real second; the service applies it, events record it.
    scale: int = 1


@dataclass(frozen=True, slots=True)
class TableConfig:
    ruleset: str
    mode: str
    board: Board
    chance_deck: tuple[Card, ...]
    min_players: int = 2
    max_players: int = 5
    starting_cash: int = 15000
    salary: int = 2000  # G5
    start_bonus: int = 1000  # G6: landing exactly on start
    jail_fine: int = 500  # J2
    max_jail_turns: int = 3  # J4
    rent_while_jailed: bool = False  # G9 (online: no rent while the owner is in jail)
    #: P6: even building and selling within a group.
    even_build: bool = True
    #: P9: build actions per colour group per turn (None: no limit).
    builds_per_group_per_turn: int | None = 1
    #: P9: buildings only before rolling.
    build_before_roll_only: bool = True
    #: P8: a sold building returns this percent of its cost.
    building_sale_percent: int = 100
    #: M2: lifting costs the mortgage value plus this percent of the price.
    mortgage_lift_percent_of_price: int = 10
    #: M3: rounds before an unlifted mortgage is lost to an auction (None: never).
    mortgage_expiry_rounds: int | None = 7
    auction: AuctionRules = field(default_factory=AuctionRules)
    trade: TradeRules = field(default_factory=TradeRules)
    casino: CasinoRules = field(default_factory=CasinoRules)
    clock: ClockRules = field(default_factory=ClockRules)
    #: X4: two teams, seats 0 and 2 against 1 and 3.
    teams: bool = False
    #: X3: the purchasable squares are dealt out at the start.
    deal_board: bool = False
    #: X3: an owner may put a mortgaged property of theirs to auction at once.
    mortgage_auction: bool = False
    #: X6: the speed die joins from this round on (None: never).
    speed_die_from_round: int | None = None
    #: Games still running after this many rounds end by net worth (None: no cap).
    round_cap: int | None = None

    def with_changes(self, **changes: Any) -> TableConfig:
        return replace(self, **changes)

    def lift_cost(self, price: int) -> int:
        """M2: what lifting the mortgage of a square of this price costs."""
        return price // 2 + price * self.mortgage_lift_percent_of_price // 100

    def sale_value(self, house_cost: int) -> int:
        """P8: what one sold building returns."""
        return house_cost * self.building_sale_percent // 100


def classic(**changes: Any) -> TableConfig:
    """X1: online Classic, 2-5 players, $15,000 each, even building."""
    cfg = TableConfig(ruleset="online", mode="classic", board=online_board(), chance_deck=online_chance_deck())
    return cfg.with_changes(**changes) if changes else cfg


PRESETS = {"classic": classic}


def preset(name: str, **changes: Any) -> TableConfig:
    try:
        factory = PRESETS[name]
    except KeyError:
        raise ValueError(f"unknown preset {name!r}; known: {', '.join(sorted(PRESETS))}") from None
    return factory(**changes)
