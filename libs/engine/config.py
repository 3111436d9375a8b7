"""Rule sets and modes as data: one `TableConfig` drives every rule switch.

The engine never asks "which mode is this?"; it reads the amounts and
switches below. A mode is a preset of this config: the online modes (X1-X5)
and the hasbro rule set with its variants (H1-H6).

Fields added after the first published config are marked `added`: their
defaults keep the online behaviour, and the simulator's canonical event
encoding leaves them out while they hold their default, so the events hash
of an online game does not change when the config grows.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any

from .board import Board, hasbro_board, online_board
from .cards import Card, duel_chance_deck, hasbro_chance_deck, hasbro_chest_deck, online_chance_deck
from .errors import SettingRefused


def added(default: Any) -> Any:
    """A config field added later: its default keeps the online behaviour (see the module doc)."""
    return field(default=default, metadata={"added": True})


@dataclass(frozen=True, slots=True)
class AuctionRules:
    #: A1: the first bid is at least the printed price (True) or `min_first_bid`.
    start_at_price: bool = True
    min_first_bid: int = 0
    #: A1: each bid at least this much above the last.
    increment: int = 100
    #: A1: the player who declined does not bid.
    decliner_excluded: bool = True
    #: The rule ID of these bidding rules, which a refused bid names: A1 (online) or A2 (hasbro).
    rule: str = added("A1")


@dataclass(frozen=True, slots=True)
class TradeRules:
    #: T1: proposals allowed per turn (None: no limit).
    max_proposals_per_turn: int | None = 3
    #: T5: the smaller side must be worth at least this fraction (percent) of the larger.
    min_balance_percent: int | None = 50
    #: T4: mortgaged properties may be traded (online: only between teammates).
    mortgaged_tradeable: bool = False
    #: T6: any active player may propose to any other at any time (not only the player to act).
    any_time: bool = added(False)
    #: T2 (hasbro): Get Out of Jail Free cards may be part of a trade.
    jail_cards: bool = added(False)


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


#: The sub-protocols a table can hand to a service of their own.
SUB_PROTOCOLS = ("auction", "trade", "casino")


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
    #: Sub-protocols run by services of their own (a subset of `SUB_PROTOCOLS`). The table then
    #: opens them (`AuctionStarted`, `CasinoOpened`) and waits for their results (`SettleAuction`,
    #: `SettleBet`, `ExecuteTrade`) instead of taking bids, bets and proposals itself; the rules
    #: are the same pure modules either way.
    external: tuple[str, ...] = ()
    # -- added for the hasbro rule set (defaults: the online behaviour) -----------------
    #: C2: the Community Chest deck (empty: no chest squares are drawn from).
    chest_deck: tuple[Card, ...] = added(())
    #: C3: a drawn card goes to the bottom of its deck (False: discarded, reshuffled when empty, C4).
    cards_to_bottom: bool = added(False)
    #: P10: houses and hotels the bank holds (None: no limit).
    house_supply: int | None = added(None)
    hotel_supply: int | None = added(None)
    #: P7, H3: houses on a property before its hotel (the hotel is level 5 either way).
    hotel_after_houses: int = added(4)
    #: M2: lifting also costs this percent of the mortgage value (rounded up).
    mortgage_interest_percent: int = added(0)
    #: M4: a mortgaged property received in a trade or a bankruptcy costs this percent of its
    #: mortgage value (rounded up) unless lifted at once (None: no such rule).
    mortgage_transfer_fee_percent: int | None = added(None)
    #: M4: lifting a received square cancels only the lifter's own fee (False: every fee on the
    #: square, as tables recorded before that was fixed replay).
    mortgage_fee_own_only: bool = added(False)
    #: P10, G9: build, sell buildings, mortgage and lift at any time, also outside one's turn.
    manage_any_time: bool = added(False)
    #: P10: when several players want more buildings than the bank holds, they are auctioned.
    building_auction: bool = added(False)
    #: D4: properties returned to the bank by a bankruptcy are auctioned at once.
    bankrupt_auction: bool = added(False)
    #: D3: a bankrupt player's Get Out of Jail Free cards go to the creditor (False: to the decks).
    jail_cards_to_creditor: bool = added(False)
    #: H2: rent is due only when the owner claims it before the next player rolls.
    rent_claims: bool = added(False)
    #: H3, H4: deeds dealt to each player at the start, and whether they pay the prices.
    deal_deeds: int = added(0)
    deal_deeds_paid: bool = added(False)
    #: H3, H4: the game ends (H6 valuation) when this many players are bankrupt (None: never).
    end_after_bankruptcies: int | None = added(None)
    #: H5: the game ends (H6 valuation) at the first turn end from this game minute on (None: never).
    time_limit_minutes: int | None = added(None)
    #: G1 (hasbro): the turn order is the seating from the highest opening roll, passing to the
    #: left (False: a random seat order from the table's seed, online).
    opening_roll: bool = added(False)

    def with_changes(self, **changes: Any) -> TableConfig:
        return replace(self, **changes)

    def lift_cost(self, price: int) -> int:
        """M2: what lifting the mortgage of a square of this price costs."""
        value = price // 2
        return (
            value
            + price * self.mortgage_lift_percent_of_price // 100
            + -(-value * self.mortgage_interest_percent // 100)
        )

    def transfer_fee(self, price: int) -> int:
        """M4: what keeping a received mortgaged square of this price mortgaged costs at once."""
        return -(-(price // 2) * (self.mortgage_transfer_fee_percent or 0) // 100)

    def sale_value(self, house_cost: int) -> int:
        """P8: what one sold building returns."""
        return house_cost * self.building_sale_percent // 100


def classic(**changes: Any) -> TableConfig:
    """X1: online Classic, 2-5 players, $15,000 each, even building."""
    cfg = TableConfig(ruleset="online", mode="classic", board=online_board(), chance_deck=online_chance_deck())
    return cfg.with_changes(**changes) if changes else cfg


#: E1, E3, E4: the faster clock of Speed and Duel.
FAST_CLOCK = ClockRules(turn_seconds=45, salary_stop_minute=30, tax_start_minute=40)


def speed(**changes: Any) -> TableConfig:
    """X2: $17,500, uneven building, faster clock, speed die from round 8."""
    return classic(
        mode="speed", starting_cash=17500, even_build=False, clock=FAST_CLOCK, speed_die_from_round=8
    ).with_changes(**changes)


def duel(**changes: Any) -> TableConfig:
    """X3: exactly 3 players, the board dealt out, $25,000, free building, 75% sales,
    own mortgaged property to auction, 21 cards, speed die from round 8, faster clock."""
    return classic(
        mode="duel",
        min_players=3,
        max_players=3,
        starting_cash=25000,
        deal_board=True,
        even_build=False,
        builds_per_group_per_turn=None,
        building_sale_percent=75,
        mortgage_auction=True,
        chance_deck=duel_chance_deck(),
        speed_die_from_round=8,
        clock=FAST_CLOCK,
    ).with_changes(**changes)


def team(**changes: Any) -> TableConfig:
    """X4: exactly 4 players in two teams (seats 0 and 2 against 1 and 3), $15,000 each."""
    return classic(mode="team", min_players=4, max_players=4, teams=True).with_changes(**changes)


@dataclass(frozen=True, slots=True)
class Bound:
    low: int
    high: int
    none_allowed: bool = False


#: X5: what a host may set, and within which bounds.
CUSTOM_BOUNDS: dict[str, Bound] = {
    "starting_cash": Bound(5_000, 50_000),
    "turn_seconds": Bound(15, 300),
    "salary_stop_minute": Bound(5, 240, none_allowed=True),
    "tax_start_minute": Bound(5, 240, none_allowed=True),
    "mortgage_rounds": Bound(1, 50, none_allowed=True),
}
BUILD_MODES = ("even", "free")
#: X5: every setting a host may give `custom`.
HOST_SETTINGS = frozenset({*CUSTOM_BOUNDS, "build_mode", "speed_die"})


def custom(
    starting_cash: int = 15000,
    turn_seconds: int = 75,
    salary_stop_minute: int | None = 46,
    tax_start_minute: int | None = 61,
    mortgage_rounds: int | None = 7,
    build_mode: str = "even",
    speed_die: bool = False,
    **changes: Any,
) -> TableConfig:
    """X5: a host's table: the settings above, each checked against its bounds."""
    values = {
        "starting_cash": starting_cash,
        "turn_seconds": turn_seconds,
        "salary_stop_minute": salary_stop_minute,
        "tax_start_minute": tax_start_minute,
        "mortgage_rounds": mortgage_rounds,
    }
    for name, value in values.items():
        bound = CUSTOM_BOUNDS[name]
        if value is None and bound.none_allowed:
            continue
        if type(value) is not int or not bound.low <= value <= bound.high:
            never = " or none" if bound.none_allowed else ""
            raise SettingRefused(
                "X5", f"{name} must be a whole number from {bound.low} to {bound.high}{never}, not {value!r}"
            )
    if build_mode not in BUILD_MODES:
        raise SettingRefused("X5", f"build_mode must be one of {', '.join(BUILD_MODES)}, not {build_mode!r}")
    if type(speed_die) is not bool:
        raise SettingRefused("X5", f"speed_die is on or off, not {speed_die!r}")
    unknown = sorted(set(changes) - {f.name for f in fields(TableConfig)})
    if unknown:  # a misspelt setting must not pass for the default silently, nor as a TypeError
        raise SettingRefused(
            "X5", f"no setting {', '.join(unknown)}; a custom table's settings are {', '.join(sorted(HOST_SETTINGS))}"
        )
    base = ClockRules()
    clock = replace(
        base, turn_seconds=turn_seconds, salary_stop_minute=salary_stop_minute, tax_start_minute=tax_start_minute
    )
    return classic(
        mode="custom",
        starting_cash=starting_cash,
        clock=clock,
        mortgage_expiry_rounds=mortgage_rounds,
        even_build=build_mode == "even",
        speed_die_from_round=8 if speed_die else None,
    ).with_changes(**changes)


def rule_card(config: TableConfig) -> str:
    """X5: the table card: every rule that differs from Classic, in words."""
    base = classic()
    players = (
        str(config.min_players)
        if config.min_players == config.max_players
        else f"{config.min_players}-{config.max_players}"
    )
    lines = [f"{config.mode.title()} table ({players} players)"]

    def minute(value: int | None) -> str:
        return "never" if value is None else f"minute {value}"

    rows = [
        ("Starting money", f"${config.starting_cash:,}", f"${base.starting_cash:,}"),
        ("Turn timer", f"{config.clock.turn_seconds} s", f"{base.clock.turn_seconds} s"),
        ("Salary stops", minute(config.clock.salary_stop_minute), minute(base.clock.salary_stop_minute)),
        ("Rent tax starts", minute(config.clock.tax_start_minute), minute(base.clock.tax_start_minute)),
        (
            "Mortgage lost after",
            "never" if config.mortgage_expiry_rounds is None else f"{config.mortgage_expiry_rounds} rounds",
            f"{base.mortgage_expiry_rounds} rounds",
        ),
        ("Building", "even" if config.even_build else "free (uneven)", "even"),
        (
            "Build actions per group per turn",
            "no limit" if config.builds_per_group_per_turn is None else str(config.builds_per_group_per_turn),
            str(base.builds_per_group_per_turn),
        ),
        ("Buildings sell for", f"{config.building_sale_percent}% of cost", f"{base.building_sale_percent}% of cost"),
        (
            "Speed die",
            "off" if config.speed_die_from_round is None else f"from round {config.speed_die_from_round}",
            "off",
        ),
        ("Teams", "2 against 2" if config.teams else "none", "none"),
        ("Board dealt at the start", "yes" if config.deal_board else "no", "no"),
        (
            "Own mortgaged property to auction",
            "allowed" if config.mortgage_auction else "not allowed",
            "not allowed",
        ),
        ("Chance cards", str(len(config.chance_deck)), str(len(base.chance_deck))),
    ]
    changed = [(name, value) for name, value, classic_value in rows if value != classic_value]
    if not changed:
        lines.append("  Classic rules, nothing changed")
    for name, value in changed:
        lines.append(f"  {name}: {value}")
    return "\n".join(lines)


def hasbro(**changes: Any) -> TableConfig:
    """The printed classic game (seeds 000, 001): B3-B4, C1-C3, H1, and the hasbro rules of
    G1, J2, J4, P8, P10, M2, M4, A2, T6, D3, D4."""
    cfg = TableConfig(
        ruleset="hasbro",
        mode="hasbro",
        board=hasbro_board(),
        chance_deck=hasbro_chance_deck(),
        min_players=2,
        max_players=6,  # H1
        starting_cash=1500,  # H1
        salary=200,  # G5
        start_bonus=0,  # G6 is online only
        jail_fine=50,  # J2, J4
        rent_while_jailed=True,  # G9
        builds_per_group_per_turn=None,  # P10: any time, no per-turn limit
        build_before_roll_only=False,
        building_sale_percent=50,  # P8
        mortgage_lift_percent_of_price=0,
        mortgage_interest_percent=10,  # M2
        mortgage_expiry_rounds=None,  # M3 is online only
        auction=AuctionRules(
            start_at_price=False, min_first_bid=10, increment=1, decliner_excluded=False, rule="A2"
        ),  # A2
        trade=TradeRules(
            max_proposals_per_turn=None,
            min_balance_percent=None,
            mortgaged_tradeable=True,
            any_time=True,
            jail_cards=True,
        ),  # T2, T4, T6
        casino=CasinoRules(enabled=False),  # 20 is Free Parking (H1)
        clock=ClockRules(salary_stop_minute=None, tax_start_minute=None),  # E3, E4 are online only
        chest_deck=hasbro_chest_deck(),
        cards_to_bottom=True,  # C3
        house_supply=32,  # P10
        hotel_supply=12,
        mortgage_transfer_fee_percent=10,  # M4
        mortgage_fee_own_only=True,
        manage_any_time=True,  # P10, G9
        building_auction=True,  # P10
        bankrupt_auction=True,  # D4
        jail_cards_to_creditor=True,  # D3
        opening_roll=True,  # G1
    )
    return cfg.with_changes(**changes) if changes else cfg


def hasbro_short_8(**changes: Any) -> TableConfig:
    """H3: Short Game, printed revision "8-page": 2 deeds each, paid for; 3 houses to a hotel;
    the game ends at the second bankruptcy (H6)."""
    return hasbro(
        mode="hasbro-short-8", deal_deeds=2, deal_deeds_paid=True, hotel_after_houses=3, end_after_bankruptcies=2
    ).with_changes(**changes)


def hasbro_short_6(**changes: Any) -> TableConfig:
    """H4: Short Game, printed revision "6-page": 3 deeds each, free; ends at the first bankruptcy (H6)."""
    return hasbro(mode="hasbro-short-6", deal_deeds=3, end_after_bankruptcies=1).with_changes(**changes)


#: H5: the longest Time Limit game a table may agree on, in game minutes (a day).
MAX_TIME_LIMIT_MINUTES = 24 * 60


def hasbro_time(time_limit_minutes: int = 60, **changes: Any) -> TableConfig:
    """H5: Time Limit game: at the agreed game minute the richest player (H6) wins."""
    if type(time_limit_minutes) is not int or not 1 <= time_limit_minutes <= MAX_TIME_LIMIT_MINUTES:
        raise SettingRefused(
            "H5",
            f"time_limit_minutes must be a whole number of minutes from 1 to {MAX_TIME_LIMIT_MINUTES}, "
            f"not {time_limit_minutes!r}",
        )
    return hasbro(mode="hasbro-time", time_limit_minutes=time_limit_minutes).with_changes(**changes)


PRESETS = {
    "classic": classic,
    "speed": speed,
    "duel": duel,
    "team": team,
    "custom": custom,
    "hasbro": hasbro,
    "hasbro-short-8": hasbro_short_8,
    "hasbro-short-6": hasbro_short_6,
    "hasbro-time": hasbro_time,
}
#: What a host may set when creating a table of each preset (the rest is the preset's): the custom
#: table's rule card, and the Time Limit game's agreed length (H5).
PRESET_SETTINGS: dict[str, frozenset[str]] = {"custom": HOST_SETTINGS, "hasbro-time": frozenset({"time_limit_minutes"})}
#: The preset of each rule set's standard game, and each preset's rule set.
RULESETS = {"online": "classic", "hasbro": "hasbro"}


def preset(name: str, **changes: Any) -> TableConfig:
    try:
        factory = PRESETS[name]
    except KeyError:
        raise ValueError(f"unknown preset {name!r}; known: {', '.join(sorted(PRESETS))}") from None
    return factory(**changes)
