"""The table's rules: start a game, apply a command, evolve an event, replay.

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

from collections.abc import Callable, Sequence
from dataclasses import replace
from itertools import combinations
from typing import Any

from . import auction as auctions
from . import casino, rng
from .board import Kind
from .cards import CHEST_BASE, Card, Effect
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
from .errors import RuleViolation
from .events import (
    BackConfirmed,
    BankPaid,
    BoardDealt,
    BuildingBuilt,
    BuildingDemolished,
    BuildingPlaced,
    BuildingSold,
    BuildingsSoldDown,
    BusMoveChosen,
    CardDrawn,
    ChoiceOffered,
    ClockAdvanced,
    DeckShuffled,
    DeedsDealt,
    DiceRolled,
    DiceThrown,
    Event,
    GameEnded,
    GamePaused,
    GameResumed,
    JailCardsTraded,
    LeftJail,
    MortgageExpired,
    MortgageFeeDue,
    MortgageLifted,
    Moved,
    MrMonopolyMoved,
    PauseRejected,
    PauseRequested,
    PauseVoted,
    PaymentDue,
    PaymentMade,
    PlayerBankrupt,
    PropertyBought,
    PropertyMortgaged,
    PurchaseDeclined,
    PurchaseOffered,
    RentClaimable,
    RentClaimed,
    RentClaimLapsed,
    ResumeScheduled,
    SentToJail,
    SquareChosen,
    TableCreated,
    TimedOut,
    TradeCardsOffered,
    TurnEnded,
    TurnOrderSet,
    TurnStarted,
    TurnTimedOut,
)
from .state import BANK, Payment, Phase, PlayerState, TableState, TradeOffer
from .trade import (
    AcceptTrade,
    DeclineTrade,
    ExecuteTrade,
    ProposeTrade,
    TradeDeclined,
    TradeExecuted,
    TradeProposed,
    apply_offer,
    offer_of,
    validate_terms,
)

JAIL_SQUARE = 10
# Module-level aliases of enum members used on hot paths (a member lookup is slow on Python 3.11).
_PROPERTY, _RAILROAD, _UTILITY, _TAX, _CHANCE, _CASINO, _GO_TO_JAIL, _CHEST = (
    Kind.PROPERTY,
    Kind.RAILROAD,
    Kind.UTILITY,
    Kind.TAX,
    Kind.CHANCE,
    Kind.CASINO,
    Kind.GO_TO_JAIL,
    Kind.CHEST,
)
_JAIL_FREE, _UTILITY_THROW = Effect.JAIL_FREE, Effect.NEAREST_UTILITY_THROW
#: Auctions that start at the printed price whatever the rule set (M3, X3); others follow A1/A2.
_PRICE_START = frozenset({"mortgage_expired", "owner_sale"})
#: P10: building auctions, by the level kind they sell (1 a house, 5 a hotel).
_BUILDING_AUCTIONS = {"house": 1, "hotel": 5}
#: X6: the speed die's six faces: three numbers, Mr. Monopoly twice, the bus.
SPEED_MR_MONOPOLY = 4
SPEED_BUS = 5
SPEED_FACES = (1, 2, 3, SPEED_MR_MONOPOLY, SPEED_MR_MONOPOLY, SPEED_BUS)
_MANAGE = frozenset({Phase.PRE_ROLL, Phase.BUY, Phase.PAYMENT, Phase.POST_ROLL})
_LIFT = frozenset({Phase.PRE_ROLL, Phase.BUY, Phase.POST_ROLL})
_TRADE_WINDOWS = frozenset({Phase.PRE_ROLL, Phase.BUY, Phase.PAYMENT})
_ONLY_PRE_ROLL = frozenset({Phase.PRE_ROLL})
_ONLY_BUY = frozenset({Phase.BUY})
_ONLY_PAYMENT = frozenset({Phase.PAYMENT})
_ONLY_AUCTION = frozenset({Phase.AUCTION})
_ONLY_CASINO = frozenset({Phase.CASINO})
_ONLY_TRADE = frozenset({Phase.TRADE})
_ONLY_POST_ROLL = frozenset({Phase.POST_ROLL})
_ONLY_CHOICE = frozenset({Phase.CHOICE})
_ROLL_DONE = frozenset({Phase.PRE_ROLL, Phase.POST_ROLL})


# ---------------------------------------------------------------------------
# Starting a game and replaying one


def new_game(config: TableConfig, players: Sequence[str], seed: int) -> tuple[TableState, list[Event]]:
    """A new table: its creation events (G1 turn order, the shuffled deck, the first turn)."""
    n = len(players)
    if not config.min_players <= n <= config.max_players:
        raise RuleViolation("X1", f"{config.mode} takes {config.min_players}-{config.max_players} players, not {n}")
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
    ctx = _Ctx(state)
    ctx.events.append(created)
    ctx.emit(TurnOrderSet(rng.shuffled(range(n), state.rng_seed, state.rng_counter)))
    ctx.emit(DeckShuffled("chance", rng.shuffled(_deck_ids(config), state.rng_seed, state.rng_counter)))
    if config.chest_deck:  # C2
        chest = tuple(card.id for card in config.chest_deck)
        ctx.emit(DeckShuffled("chest", rng.shuffled(chest, state.rng_seed, state.rng_counter)))
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
    check(state, command)
    ctx = _Ctx(state)
    effect(ctx, command)
    if state.mr_monopoly:
        _mr_monopoly(ctx)
    return ctx.events


def decide(state: TableState, command: Command) -> list[Event]:
    """The events `command` would produce; `state` is left as it was."""
    return apply(state.copy(), command)


def check(state: TableState, command: Command) -> None:
    """Raise `RuleViolation` unless `command` is legal now."""
    rule = _RULES.get(type(command))
    if rule is None:
        raise RuleViolation("G2", f"unknown command {type(command).__name__}")
    rule[0](state, command)


def legal_commands(state: TableState, seat: int) -> list[Command]:
    """Every legal game move of `seat` now (while paused: confirming one is back).

    Pause requests and votes, open to every player at any time, come from
    `pause_commands`.

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
        candidates += [Build(seat, sq) for sq in _owned(state, seat)]
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
            candidates += [Demolish(seat, sq) for sq in _demolition_targets(state, seat)]
    elif phase is Phase.POST_ROLL:
        candidates.append(EndTurn(seat))
    if state.claim:
        candidates.append(ClaimRent(seat))
    if phase not in _MANAGE and state.config.manage_any_time:
        for sq in _owned(state, seat):
            candidates += [Build(seat, sq), SellBuilding(seat, sq), Mortgage(seat, sq), LiftMortgage(seat, sq)]
    if phase in _LIFT:
        candidates += [AuctionMortgaged(seat, sq) for sq in _owned(state, seat)]
    if phase in _MANAGE:
        for sq in _owned(state, seat):
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
        for sq in _owned(state, seat):
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


class _Ctx:
    """Collects the events of one command, applying each as it is emitted."""

    __slots__ = ("events", "state")

    def __init__(self, state: TableState) -> None:
        self.state = state
        self.events: list[Event] = []

    def emit(self, event: Event) -> None:
        state = self.state
        event._evolve(state, event)  # type: ignore[attr-defined]  # set on every event class below
        state.seq += 1
        self.events.append(event)


# -- checks ------------------------------------------------------------------


def _actor(state: TableState, seat: int, phases: frozenset[Phase], rule: str = "G2") -> None:
    """Refuse a command from anyone but the seat the game waits for, or in another phase."""
    if state.paused:
        raise RuleViolation("E5", "the game is paused: confirm you are back")
    if seat != state.actor or type(seat) is not int:
        if state.finished:
            raise RuleViolation("D5", "the game is over")
        if type(seat) is not int or not 0 <= seat < len(state.players):
            raise RuleViolation("G1", f"there is no seat {seat!r}")
        raise RuleViolation(rule, f"seat {state.actor} must act now, not seat {seat}")
    if state.phase not in phases:
        raise RuleViolation(rule, f"not allowed in the {state.phase} phase")


def _any_time(state: TableState, seat: int) -> None:
    """P10, G9 (hasbro, `manage_any_time`): any active player may build, sell, mortgage and lift
    at any time; callers check the switch first and otherwise require the actor (`_actor`)."""
    if state.paused:
        raise RuleViolation("E5", "the game is paused: confirm you are back")
    _active(state, seat)


def _property(state: TableState, seat: int, square: int, rule: str) -> None:
    if type(square) is not int or not 0 <= square < 40:
        raise RuleViolation("B1", f"there is no square {square!r}")
    if not state.config.board.squares[square].purchasable:
        raise RuleViolation(rule, f"square {square} is not a property")
    if state.owner[square] != seat:
        raise RuleViolation(rule, f"{state.config.board.squares[square].name} is not yours")


def _check_roll(state: TableState, cmd: Roll) -> None:
    _actor(state, cmd.seat, _ONLY_PRE_ROLL)


def _check_buy(state: TableState, cmd: BuyProperty) -> None:
    _actor(state, cmd.seat, _ONLY_BUY, rule="P1")
    price = state.config.board.squares[state.offer].price
    if state.players[cmd.seat].cash < price:
        raise RuleViolation("P1", f"the price is ${price} and you have ${state.players[cmd.seat].cash}")


def _check_decline(state: TableState, cmd: DeclineProperty) -> None:
    _actor(state, cmd.seat, _ONLY_BUY, rule="P1")


def _check_pay(state: TableState, cmd: Pay) -> None:
    _actor(state, cmd.seat, _ONLY_PAYMENT, rule="D1")
    due = state.payments[0].amount
    cash = state.players[cmd.seat].cash
    if cash < due:
        raise RuleViolation("D1", f"${due} is due and you have ${cash}: sell, mortgage, trade or surrender")


def _check_jail_fine(state: TableState, cmd: PayJailFine) -> None:
    _actor(state, cmd.seat, _ONLY_PRE_ROLL, rule="J2")
    player = state.players[cmd.seat]
    if not player.in_jail:
        raise RuleViolation("J2", "you are not in jail")
    if player.cash < state.config.jail_fine:
        raise RuleViolation("J2", f"the fine is ${state.config.jail_fine} and you have ${player.cash}")


def _check_jail_card(state: TableState, cmd: UseJailCard) -> None:
    _actor(state, cmd.seat, _ONLY_PRE_ROLL, rule="J2")
    player = state.players[cmd.seat]
    if not player.in_jail:
        raise RuleViolation("J2", "you are not in jail")
    if not player.jail_cards:
        raise RuleViolation("J2", "you hold no Get Out of Jail Free card")


def _check_build(state: TableState, cmd: Build) -> None:
    cfg = state.config
    if cfg.build_before_roll_only:
        _actor(state, cmd.seat, _ONLY_PRE_ROLL, rule="P9")
    elif cfg.manage_any_time:
        _any_time(state, cmd.seat)
    else:
        _actor(state, cmd.seat, _MANAGE, rule="P9")
    _property(state, cmd.seat, cmd.square, "P5")
    square = cfg.board.squares[cmd.square]
    if square.kind is not Kind.PROPERTY:
        raise RuleViolation("P5", f"{square.name} takes no buildings")
    members = cfg.board.members[square.group]
    if not state.owns_group(cmd.seat, square.group):
        raise RuleViolation("P5", f"you do not own the whole {cfg.board.group_names[square.group - 1]} group")
    if any(state.mortgaged_round[sq] >= 0 for sq in members):
        raise RuleViolation("P5", "a property of the group is mortgaged")
    level = state.buildings[cmd.square]
    if level >= 5:
        raise RuleViolation("P7", f"{square.name} already has a hotel")
    if cfg.even_build and level > min(state.buildings[sq] for sq in members):
        raise RuleViolation("P6", "build evenly: another property of the group has fewer buildings")
    limit = cfg.builds_per_group_per_turn
    if limit is not None and state.builds.count(square.group) >= limit:
        raise RuleViolation("P9", "one build action per colour group per turn")
    if cfg.house_supply is not None:
        kind = 5 if level >= cfg.hotel_after_houses else 1
        if _won_building(state, cmd.seat, kind) >= 0:
            return  # P10: placing a building won at auction (paid by the bid)
        if kind == 5 and state.bank_hotels() < 1:
            raise RuleViolation("P10", "the bank has no hotel left")
        if kind == 1 and state.bank_houses() < 1:
            raise RuleViolation("P10", "the bank has no house left")
    if state.players[cmd.seat].cash < square.house_cost:
        raise RuleViolation("P5", f"a building costs ${square.house_cost}")


def _check_sell(state: TableState, cmd: SellBuilding) -> None:
    if state.config.manage_any_time:
        _any_time(state, cmd.seat)
    else:
        _actor(state, cmd.seat, _MANAGE, rule="P8")
    _property(state, cmd.seat, cmd.square, "P8")
    level = state.buildings[cmd.square]
    if level == 0:
        raise RuleViolation("P8", "there is no building to sell")
    square = state.config.board.squares[cmd.square]
    members = state.config.board.members[square.group]
    if state.config.even_build and level < max(state.buildings[sq] for sq in members):
        raise RuleViolation("P6", "sell evenly: another property of the group has more buildings")


def _check_mortgage(state: TableState, cmd: Mortgage) -> None:
    if state.config.manage_any_time:
        _any_time(state, cmd.seat)
    else:
        _actor(state, cmd.seat, _MANAGE, rule="M1")
    _property(state, cmd.seat, cmd.square, "M1")
    if state.mortgaged_round[cmd.square] >= 0:
        raise RuleViolation("M1", "already mortgaged")
    square = state.config.board.squares[cmd.square]
    if square.kind is Kind.PROPERTY and state.group_has_buildings(square.group):
        raise RuleViolation("M1", "sell the group's buildings first")


def _check_lift(state: TableState, cmd: LiftMortgage) -> None:
    if state.config.manage_any_time:
        _any_time(state, cmd.seat)
    else:
        _actor(state, cmd.seat, _LIFT, rule="M2")
    _property(state, cmd.seat, cmd.square, "M2")
    if state.mortgaged_round[cmd.square] < 0:
        raise RuleViolation("M2", "not mortgaged")
    cost = state.config.lift_cost(state.config.board.squares[cmd.square].price)
    if state.players[cmd.seat].cash < cost:
        raise RuleViolation("M2", f"lifting costs ${cost}")


def _check_end_turn(state: TableState, cmd: EndTurn) -> None:
    _actor(state, cmd.seat, _ONLY_POST_ROLL)


def _check_surrender(state: TableState, cmd: Surrender) -> None:
    _actor(state, cmd.seat, _MANAGE, rule="D2")


def _check_bid(state: TableState, cmd: Command) -> None:
    _actor(state, cmd.seat, _ONLY_AUCTION, rule="A1")
    auction = state.auction
    assert auction is not None
    auctions.check(auction, cmd, _bid_limit(state, cmd))


def _check_propose(state: TableState, cmd: ProposeTrade) -> None:
    if state.config.trade.any_time:  # T6: any active player, any time but during another proposal
        if state.paused:
            raise RuleViolation("E5", "the game is paused: confirm you are back")
        _active(state, cmd.seat)
        if state.trade is not None:
            raise RuleViolation("T6", "another proposal is waiting for its answer")
    else:
        _actor(state, cmd.seat, _TRADE_WINDOWS, rule="T1")
    limit = state.config.trade.max_proposals_per_turn
    if limit is not None and state.proposals >= limit:
        raise RuleViolation("T1", f"at most {limit} trade proposals per turn")
    validate_terms(state, offer_of(state.next_trade_id, cmd), teammates(state, cmd.seat, cmd.counterparty))


def _pending_trade(state: TableState, seat: int, trade_id: int) -> TradeOffer:
    _actor(state, seat, _ONLY_TRADE, rule="T2")
    trade = state.trade
    assert trade is not None
    if trade_id != trade.trade_id:
        raise RuleViolation("T2", f"trade {trade_id} is not the open proposal (that is {trade.trade_id})")
    return trade


def _check_accept(state: TableState, cmd: AcceptTrade) -> None:
    trade = _pending_trade(state, cmd.seat, cmd.trade_id)
    validate_terms(state, trade, teammates(state, trade.proposer, trade.counterparty))


def _check_decline_trade(state: TableState, cmd: DeclineTrade) -> None:
    _pending_trade(state, cmd.seat, cmd.trade_id)


def _check_bet(state: TableState, cmd: casino.PlaceBet) -> None:
    _actor(state, cmd.seat, _ONLY_CASINO, rule="K1")
    rules = state.config.casino
    casino.check_numbers(tuple(cmd.numbers), rules)
    if state.players[cmd.seat].cash < rules.stake:
        raise RuleViolation("K1", f"the stake is ${rules.stake}")


def _check_decline_bet(state: TableState, cmd: casino.DeclineBet) -> None:
    _actor(state, cmd.seat, _ONLY_CASINO, rule="K1")


# -- effects -------------------------------------------------------------------


def _do_roll(ctx: _Ctx, cmd: Roll) -> None:
    state = ctx.state
    seat = cmd.seat
    if state.claim and state.claim[0] != seat:  # H2: the next player rolls, the claim lapses
        ctx.emit(RentClaimLapsed(state.claim[1]))
    d1, d2 = rng.dice(state.rng_seed, state.rng_counter)
    player = state.players[seat]
    was_in_jail = player.in_jail
    speed = 0
    start = state.config.speed_die_from_round
    if start is not None and state.round >= start and not was_in_jail:
        speed = SPEED_FACES[rng.die(state.rng_seed, state.rng_counter + 2) - 1]
    ctx.emit(DiceRolled(seat, d1, d2, speed))
    if was_in_jail:
        if d1 == d2:  # J3: free, move by this roll, no further roll
            ctx.emit(LeftJail(seat, "doubles"))
        elif player.jail_turns >= state.config.max_jail_turns:  # J4: forced fine, then move
            _charge(ctx, seat, BANK, state.config.jail_fine, "jail_fine", then_move=True)
            return
        else:
            return
    elif state.doubles >= 3:  # G4: jail at once, the square is not resolved
        ctx.emit(SentToJail(seat, "third_doubles"))
        _end_turn(ctx)
        return
    elif speed == SPEED_BUS or (d1 == d2 == speed):  # X6: bus, or a triple
        ctx.emit(ChoiceOffered(seat, "bus" if speed == SPEED_BUS else "triple"))
        return
    _move(ctx, seat, d1 + d2 + (speed if speed <= 3 else 0))
    _land(ctx, seat)


def _do_buy(ctx: _Ctx, cmd: BuyProperty) -> None:
    square = ctx.state.offer
    ctx.emit(PropertyBought(cmd.seat, square, ctx.state.config.board.squares[square].price))


def _do_decline(ctx: _Ctx, cmd: DeclineProperty) -> None:
    state = ctx.state
    square = state.offer
    ctx.emit(PurchaseDeclined(cmd.seat, square))
    excluded = cmd.seat if state.config.auction.decliner_excluded else BANK
    _start_auction(ctx, square, "declined", after=cmd.seat, excluded=excluded)


def _do_pay(ctx: _Ctx, cmd: Pay) -> None:
    due = ctx.state.payments[0]
    ctx.emit(PaymentMade(due.debtor, due.creditor, due.amount, due.reason, due.bank_share))
    if due.then_move:  # J4: the forced fine is paid, move by the third roll
        ctx.emit(LeftJail(cmd.seat, "forced_fine"))
        d1, d2 = ctx.state.dice
        _move(ctx, cmd.seat, d1 + d2)
        _land(ctx, cmd.seat)


def _do_jail_fine(ctx: _Ctx, cmd: PayJailFine) -> None:
    ctx.emit(LeftJail(cmd.seat, "fine", ctx.state.config.jail_fine))


def _do_jail_card(ctx: _Ctx, cmd: UseJailCard) -> None:
    ctx.emit(LeftJail(cmd.seat, "card"))


def _do_build(ctx: _Ctx, cmd: Build) -> None:
    state = ctx.state
    cfg = state.config
    square = cfg.board.squares[cmd.square]
    level = state.buildings[cmd.square]
    if cfg.house_supply is None:
        ctx.emit(BuildingBuilt(cmd.seat, cmd.square, level + 1, square.house_cost))
        return
    new = level + 1 if level < cfg.hotel_after_houses else 5  # P7, H3
    kind = 5 if new == 5 else 1
    if _won_building(state, cmd.seat, kind) >= 0:  # P10: a building won at auction
        ctx.emit(BuildingPlaced(cmd.seat, cmd.square, new))
        return
    if cfg.building_auction:
        bidders = _building_bidders(state, cmd.seat, kind)
        if bidders:
            _start_auction(
                ctx, cmd.square, "hotel" if kind == 5 else "house", after=cmd.seat, excluded=BANK, among=bidders
            )
            return
    ctx.emit(BuildingBuilt(cmd.seat, cmd.square, new, square.house_cost))


def _won_building(state: TableState, seat: int, kind: int) -> int:
    """P10: the index of a building of `kind` that `seat` won at auction and has not placed, or -1."""
    for i, won in enumerate(state.won_buildings):
        if won == (seat, kind):
            return i
    return -1


def _building_bidders(state: TableState, seat: int, kind: int) -> tuple[int, ...]:
    """P10 (decision): a building goes to auction when the bank holds fewer buildings of its kind
    than there are players who could build one now (the asking player included), and at least
    two could. Empty: no auction, the building is simply bought."""
    available = state.bank_hotels() if kind == 5 else state.bank_houses()
    active = state.active_seats
    if available >= len(active):
        return ()
    wanting = tuple(s for s in active if s == seat or _could_build(state, s, kind))
    if len(wanting) < 2 or available >= len(wanting):
        return ()
    return wanting


def _could_build(state: TableState, seat: int, kind: int) -> bool:
    """P5-P7, P10: `seat` owns a square where a building of `kind` is legal now (cash apart)."""
    cfg = state.config
    board = cfg.board
    for group in range(1, len(board.members)):
        members = board.members[group]
        if not state.owns_group(seat, group) or any(state.mortgaged_round[sq] >= 0 for sq in members):
            continue
        levels = [state.buildings[sq] for sq in members]
        low = min(levels)
        if low >= 5:
            continue
        if (5 if low >= cfg.hotel_after_houses else 1) == kind and state.players[
            seat
        ].cash >= cfg.auction.min_first_bid:
            return True
    return False


def _do_sell(ctx: _Ctx, cmd: SellBuilding) -> None:
    state = ctx.state
    cfg = state.config
    refund = cfg.sale_value(cfg.board.squares[cmd.square].house_cost)
    level = state.buildings[cmd.square]
    if level == 5 and cfg.house_supply is not None:  # P8: the hotel goes back to its houses
        houses = cfg.hotel_after_houses
        if state.bank_houses() >= houses:
            ctx.emit(BuildingSold(cmd.seat, cmd.square, houses, refund))
        else:
            _sell_group_down(ctx, cmd.seat, cmd.square)
        return
    ctx.emit(BuildingSold(cmd.seat, cmd.square, level - 1, refund))


def _sell_group_down(ctx: _Ctx, seat: int, square: int) -> None:
    """P8 (decision): the bank lacks the houses to break the hotel up, so the whole group goes
    down evenly to the highest level its houses and the bank's can supply."""
    state = ctx.state
    cfg = state.config
    sq_data = cfg.board.squares[square]
    members = cfg.board.members[sq_data.group]
    hotel_rank = cfg.hotel_after_houses + 1
    held = sum(state.buildings[sq] for sq in members if state.buildings[sq] < 5)
    houses = state.bank_houses() + held
    target = min(cfg.hotel_after_houses, houses // len(members))
    # the sold hotel itself goes below its level even when the bank could supply more to the rest
    levels = tuple(min(target, state.buildings[sq]) for sq in members)
    ranks = sum(hotel_rank if state.buildings[sq] == 5 else state.buildings[sq] for sq in members)
    refund = (ranks - sum(levels)) * cfg.sale_value(sq_data.house_cost)
    ctx.emit(BuildingsSoldDown(seat, members, levels, refund))


def _do_mortgage(ctx: _Ctx, cmd: Mortgage) -> None:
    value = ctx.state.config.board.squares[cmd.square].mortgage_value
    ctx.emit(PropertyMortgaged(cmd.seat, cmd.square, value))


def _do_lift(ctx: _Ctx, cmd: LiftMortgage) -> None:
    cfg = ctx.state.config
    ctx.emit(MortgageLifted(cmd.seat, cmd.square, cfg.lift_cost(cfg.board.squares[cmd.square].price)))


def _do_end_turn(ctx: _Ctx, cmd: EndTurn) -> None:
    _end_turn(ctx)


def _do_surrender(ctx: _Ctx, cmd: Surrender) -> None:
    state = ctx.state
    creditor = BANK
    if state.payments and state.payments[0].debtor == cmd.seat:
        creditor = state.payments[0].creditor  # D3: surrendering a debt to a player
    _bankrupt(ctx, cmd.seat, creditor, "surrender")


def _do_bid(ctx: _Ctx, cmd: Command) -> None:
    state = ctx.state
    auction = state.auction
    assert auction is not None
    reason, seller = auction.reason, auction.seller
    for event in auctions.decide(auction, cmd, _bid_limit(state, cmd)):
        ctx.emit(event)
        if isinstance(event, auctions.AuctionSettled):
            _after_auction(ctx, event, reason, seller)


def _do_propose(ctx: _Ctx, cmd: ProposeTrade) -> None:
    o = offer_of(ctx.state.next_trade_id, cmd)
    ctx.emit(
        TradeProposed(o.trade_id, o.proposer, o.counterparty, o.give_cash, o.give_squares, o.take_cash, o.take_squares)
    )
    if o.give_cards or o.take_cards:  # T2 (hasbro)
        ctx.emit(TradeCardsOffered(o.trade_id, o.give_cards, o.take_cards))


def _do_accept(ctx: _Ctx, cmd: AcceptTrade) -> None:
    o = ctx.state.trade
    assert o is not None
    _execute_trade(ctx, o)


def _execute_trade(ctx: _Ctx, o: TradeOffer) -> None:
    """The trade's money and squares (T2), then its jail cards and M4's fee for each mortgaged square."""
    ctx.emit(
        TradeExecuted(o.trade_id, o.proposer, o.counterparty, o.give_cash, o.give_squares, o.take_cash, o.take_squares)
    )
    if o.give_cards or o.take_cards:
        ctx.emit(JailCardsTraded(o.trade_id, o.proposer, o.counterparty, o.give_cards, o.take_cards))
    state = ctx.state
    if state.config.mortgage_transfer_fee_percent is not None:
        for receiver, squares in ((o.counterparty, o.give_squares), (o.proposer, o.take_squares)):
            for sq in squares:
                if state.mortgaged_round[sq] >= 0 and not state.finished:
                    _mortgage_fee(ctx, receiver, sq)


def _mortgage_fee(ctx: _Ctx, seat: int, square: int) -> None:
    """M4: the receiver of a mortgaged square pays the fee (`Pay`) or lifts the mortgage at once."""
    state = ctx.state
    fee = state.config.transfer_fee(state.config.board.squares[square].price)
    if fee <= 0 or state.players[seat].bankrupt:
        return
    owed = fee + sum(p.amount for p in state.payments if p.debtor == seat)
    if state.players[seat].cash < owed and state.raisable(seat) < owed:
        _bankrupt(ctx, seat, BANK)
        return
    ctx.emit(MortgageFeeDue(seat, square, fee))


def _do_decline_trade(ctx: _Ctx, cmd: DeclineTrade) -> None:
    ctx.emit(TradeDeclined(cmd.trade_id, cmd.seat))


def _do_bet(ctx: _Ctx, cmd: casino.PlaceBet) -> None:
    state = ctx.state
    rules = state.config.casino
    numbers = tuple(sorted(cmd.numbers))
    ctx.emit(casino.BetPlaced(cmd.seat, numbers, rules.stake, rules.pool_per_bet))
    die, jackpot_hit = casino.draw(state.rng_seed, state.rng_counter, rules)
    ctx.emit(casino.settle(cmd.seat, numbers, die, jackpot_hit, state.jackpot, rules, casino.DRAWS_PER_BET))


def _do_decline_bet(ctx: _Ctx, cmd: casino.DeclineBet) -> None:
    ctx.emit(casino.BetDeclined(cmd.seat))


# -- results of sub-protocols run by services (config.external) ---------------------


def _external(state: TableState, sub_protocol: str, rule: str) -> None:
    if sub_protocol not in state.config.external:
        raise RuleViolation(rule, f"this table runs its {sub_protocol} itself")
    if state.finished:
        raise RuleViolation("D5", "the game is over")


def _check_settle_auction(state: TableState, cmd: auctions.SettleAuction) -> None:
    _external(state, "auction", "A1")
    auction = state.auction
    if auction is None or auction.auction_id != cmd.auction_id:
        done = cmd.auction_id < state.next_auction_id and (auction is None or cmd.auction_id < auction.auction_id)
        raise RuleViolation("A1", f"auction {cmd.auction_id} is {'already settled' if done else 'not open'}")
    if cmd.winner != BANK:
        if cmd.winner not in auction.bidders:
            raise RuleViolation("A1", f"seat {cmd.winner} was not a bidder in auction {cmd.auction_id}")
        if type(cmd.price) is not int or cmd.price < auction.start_price:
            raise RuleViolation("A1", f"the winning bid must be at least ${auction.start_price}")


def _do_settle_auction(ctx: _Ctx, cmd: auctions.SettleAuction) -> None:
    auction = ctx.state.auction
    assert auction is not None
    winner, price = cmd.winner, cmd.price
    if winner != BANK and ctx.state.players[winner].bankrupt:  # the winner left meanwhile: no sale
        winner, price = BANK, 0
    settled = auctions.AuctionSettled(auction.auction_id, auction.square, winner, price)
    reason, seller = auction.reason, auction.seller
    ctx.emit(settled)
    _after_auction(ctx, settled, reason, seller)


def _check_settle_bet(state: TableState, cmd: casino.SettleBet) -> None:
    _external(state, "casino", "K1")
    if not state.casino or cmd.seat != state.current:
        raise RuleViolation("K1", f"no bet is open for seat {cmd.seat}")
    if cmd.numbers:
        rules = state.config.casino
        casino.check_numbers(tuple(cmd.numbers), rules)
        if state.players[cmd.seat].cash < rules.stake:
            raise RuleViolation("K1", f"the stake is ${rules.stake}")
        if type(cmd.die) is not int or not 1 <= cmd.die <= 6:
            raise RuleViolation("K2", f"a die shows 1 to 6, not {cmd.die!r}")


def _do_settle_bet(ctx: _Ctx, cmd: casino.SettleBet) -> None:
    if not cmd.numbers:
        ctx.emit(casino.BetDeclined(cmd.seat))
        return
    state = ctx.state
    rules = state.config.casino
    numbers = tuple(sorted(cmd.numbers))
    ctx.emit(casino.BetPlaced(cmd.seat, numbers, rules.stake, rules.pool_per_bet))
    ctx.emit(casino.settle(cmd.seat, numbers, cmd.die, bool(cmd.jackpot_hit), state.jackpot, rules, 0))


def trade_window(state: TableState, seat: int) -> None:
    """T1, T6: may `seat` propose a trade to be agreed at a trade service now?

    The trade service asks it of a proposal and the table of its execution, so the window is
    written once. Online (T1): the player whose turn it is, before rolling, deciding a purchase
    or paying. Hasbro (T6): any active player at any time the game is not paused.
    """
    if state.finished:
        raise RuleViolation("D5", "the game is over")
    if state.paused:
        raise RuleViolation("E5", "the game is paused")
    if state.config.trade.any_time:
        _active(state, seat)
        return
    if seat != state.current:
        raise RuleViolation("T1", f"only the player whose turn it is (seat {state.current}) may propose")
    if state.phase not in _TRADE_WINDOWS:
        raise RuleViolation(
            "T1", f"proposals are made before rolling, deciding a purchase or paying, not in {state.phase.value}"
        )


def _check_execute_trade(state: TableState, cmd: ExecuteTrade) -> None:
    _external(state, "trade", "T1")
    if state.paused:
        raise RuleViolation("E5", "the game is paused")
    if cmd.turn_no != state.turn_no:
        raise RuleViolation("T1", f"the proposal lapsed: turn {cmd.turn_no} is over")
    try:
        trade_window(state, cmd.seat)
    except RuleViolation as exc:
        if exc.rule != "T1":
            raise
        raise RuleViolation("T1", f"the proposal lapsed: seat {cmd.seat} can no longer trade this turn") from None
    validate_terms(state, offer_of(cmd.trade_id, cmd), teammates(state, cmd.seat, cmd.counterparty))


def _do_execute_trade(ctx: _Ctx, cmd: ExecuteTrade) -> None:
    _execute_trade(ctx, offer_of(cmd.trade_id, cmd))


# -- the speed die, choices and Duel's own-mortgage auction (X3, X6, C4) -------------


def _check_bus(state: TableState, cmd: ChooseBusMove) -> None:
    _actor(state, cmd.seat, _ONLY_CHOICE, rule="X6")
    if state.choice != "bus":
        raise RuleViolation("X6", "no bus move to choose")
    d1, d2 = state.dice
    steps: object = getattr(cmd, "steps")  # noqa: B009  # untyped read: see _check_tick
    if type(steps) is not int or steps not in (d1, d2, d1 + d2):
        raise RuleViolation("X6", f"the bus moves {d1}, {d2} or {d1 + d2} squares")


def _do_bus(ctx: _Ctx, cmd: ChooseBusMove) -> None:
    ctx.emit(BusMoveChosen(cmd.seat, cmd.steps))
    _move(ctx, cmd.seat, cmd.steps)
    _land(ctx, cmd.seat)


def _check_square(state: TableState, cmd: ChooseSquare) -> None:
    _actor(state, cmd.seat, _ONLY_CHOICE, rule="X6")
    if state.choice != "triple":
        raise RuleViolation("X6", "no triple to move with")
    square: object = getattr(cmd, "square")  # noqa: B009  # untyped read: see _check_tick
    if type(square) is not int or not 0 <= square < 40:
        raise RuleViolation("B1", f"there is no square {square!r}")


def _do_square(ctx: _Ctx, cmd: ChooseSquare) -> None:
    ctx.emit(SquareChosen(cmd.seat, cmd.square))
    _move_to(ctx, cmd.seat, cmd.square)
    _land(ctx, cmd.seat)


def _demolition_targets(state: TableState, seat: int) -> list[int]:
    """C4 (Duel): opponents' squares with a building."""
    return [
        sq
        for sq in state.config.board.purchasable
        if state.buildings[sq] and state.owner[sq] != seat and not teammates(state, seat, state.owner[sq])
    ]


def _check_demolish(state: TableState, cmd: Demolish) -> None:
    _actor(state, cmd.seat, _ONLY_CHOICE, rule="C4")
    if state.choice != "demolish":
        raise RuleViolation("C4", "no demolition to choose")
    if cmd.square not in _demolition_targets(state, cmd.seat):
        raise RuleViolation("C4", "choose an opponent's property with a building")


def _do_demolish(ctx: _Ctx, cmd: Demolish) -> None:
    ctx.emit(BuildingDemolished(cmd.seat, cmd.square, ctx.state.buildings[cmd.square] - 1))


def _check_mortgage_auction(state: TableState, cmd: AuctionMortgaged) -> None:
    _actor(state, cmd.seat, _LIFT, rule="X3")
    if not state.config.mortgage_auction:
        raise RuleViolation("X3", "only Duel auctions one's own mortgaged property")
    _property(state, cmd.seat, cmd.square, "X3")
    if state.mortgaged_round[cmd.square] < 0:
        raise RuleViolation("X3", "only a mortgaged property goes to this auction")


def _do_mortgage_auction(ctx: _Ctx, cmd: AuctionMortgaged) -> None:
    _start_auction(ctx, cmd.square, "owner_sale", after=cmd.seat, excluded=cmd.seat, seller=cmd.seat)


def _mr_monopoly(ctx: _Ctx) -> None:
    """X6: once the square of the roll is resolved, on to the nearest unowned property,
    else the nearest one an opponent owns."""
    state = ctx.state
    seat = state.current
    if state.finished or state.paused or state.actor != seat or state.phase not in _ROLL_DONE:
        return
    squares = state.config.board.squares
    start = state.players[seat].position
    target = -1
    for want_unowned in (True, False):
        for step in range(1, 40):
            sq = (start + step) % 40
            if not squares[sq].purchasable:
                continue
            owner = state.owner[sq]
            opponent = owner not in (seat, BANK) and not teammates(state, seat, owner)
            if (owner == BANK) if want_unowned else opponent:
                target = sq
                break
        if target >= 0:
            break
    ctx.emit(MrMonopolyMoved(seat, target))
    if target >= 0:
        _move_to(ctx, seat, target)
        _land(ctx, seat)


# -- H2: rent claims ----------------------------------------------------------------------


def _check_claim(state: TableState, cmd: ClaimRent) -> None:
    if state.paused:
        raise RuleViolation("E5", "the game is paused: confirm you are back")
    _active(state, cmd.seat)
    if not state.claim or state.claim[1] != cmd.seat:
        raise RuleViolation("H2", "no rent is yours to claim now")


def _do_claim(ctx: _Ctx, cmd: ClaimRent) -> None:
    payer, owner, _, amount = ctx.state.claim
    ctx.emit(RentClaimed(cmd.seat))
    _charge(ctx, payer, owner, amount, "rent")


# -- the clock: ticks, time-outs and pauses (E1-E6) -------------------------------


def _check_tick(state: TableState, cmd: Tick) -> None:
    # Read without the field's type: compiled with mypyc (make compile), `cmd.now` would
    # raise TypeError for a non-int before the rule could refuse it.
    now: object = getattr(cmd, "now")  # noqa: B009
    if type(now) is not int:
        raise RuleViolation("E6", f"the clock reads whole milliseconds, not {now!r}")
    if cmd.now < state.clock:
        raise RuleViolation("E6", f"the clock does not go back ({cmd.now} < {state.clock})")


def _do_tick(ctx: _Ctx, cmd: Tick) -> None:
    """Fire every timer due by `now`, each at its own deadline, so the outcome does not
    depend on how often the clock is read."""
    state = ctx.state
    for _ in range(10_000):  # every pass settles one due timer; the bound only guards bugs
        due = next_deadline(state)
        if due is None or due > cmd.now:
            break
        if due > state.clock:
            ctx.emit(ClockAdvanced(due))
        _fire(ctx)
        if state.mr_monopoly:
            _mr_monopoly(ctx)
    else:  # pragma: no cover
        raise RuntimeError("timers did not settle")
    if cmd.now > state.clock and not state.finished:
        ctx.emit(ClockAdvanced(cmd.now))


def next_deadline(state: TableState) -> int | None:
    """The game ms at which the game acts by itself next (E1, E2, E5), or None."""
    if state.finished:
        return None
    times = []
    if state.vote_deadline >= 0:
        times.append(state.vote_deadline)
    if state.resume_at >= 0:
        times.append(state.resume_at)
    if not state.paused:
        decision = _decision_deadline(state)
        if decision >= 0:
            times.append(decision)
    return min(times) if times else None


def _decision_deadline(state: TableState) -> int:
    """The game ms at which the game decides for the actor; -1 when a service keeps that timer."""
    phase = state.phase
    if phase is Phase.AUCTION:
        return -1 if "auction" in state.config.external else state.bid_deadline
    if phase is Phase.CASINO and "casino" in state.config.external:
        return -1
    if phase is Phase.TRADE:
        return state.turn_deadline
    if phase is Phase.PAYMENT and state.payments[0].deadline >= 0:
        return state.payments[0].deadline
    return state.clock if state.timed_out else state.turn_deadline


def _fire(ctx: _Ctx) -> None:
    """Act for whoever's timer ran out, as E2 says."""
    state = ctx.state
    if state.vote_deadline >= 0 and state.vote_deadline <= state.clock:
        ctx.emit(PauseRejected("timeout"))  # E5: silence is no
        return
    if state.resume_at >= 0 and state.resume_at <= state.clock:
        ctx.emit(GameResumed(state.clock - state.paused_at))
        return
    phase = state.phase
    actor = state.actor
    if phase is Phase.AUCTION:  # A1: no bid in time is a pass
        ctx.emit(TimedOut(actor, "bid"))
        _do_bid(ctx, auctions.PassBid(actor))
        return
    if phase is Phase.TRADE:
        trade = state.trade
        assert trade is not None
        ctx.emit(TimedOut(actor, "trade"))
        _do_decline_trade(ctx, DeclineTrade(actor, trade.trade_id))
        return
    if phase is Phase.PAYMENT and state.payments[0].deadline >= 0:
        ctx.emit(TimedOut(actor, "debt"))
        _liquidate_and_pay(ctx, actor)
        return
    seat = state.current
    if not state.timed_out:
        missed = state.missed[seat] + 1
        ctx.emit(TurnTimedOut(seat, missed))
        if missed >= state.config.clock.missed_turns_limit:  # E2: three in a row
            _bankrupt(ctx, seat, BANK, "timeout")
            return
    _default_action(ctx, seat)


def _default_action(ctx: _Ctx, seat: int) -> None:
    """E2: what the game does for a player out of time."""
    state = ctx.state
    phase = state.phase
    if phase is Phase.PRE_ROLL:
        _do_roll(ctx, Roll(seat))
    elif phase is Phase.BUY:
        _do_decline(ctx, DeclineProperty(seat))
    elif phase is Phase.PAYMENT:
        _liquidate_and_pay(ctx, seat)
    elif phase is Phase.CASINO:
        _do_decline_bet(ctx, casino.DeclineBet(seat))
    elif phase is Phase.CHOICE:
        d1, d2 = state.dice
        if state.choice == "bus":  # X6: time-out takes the sum
            _do_bus(ctx, ChooseBusMove(seat, d1 + d2))
        elif state.choice == "triple":  # decision: time-out moves by the three dice
            ctx.emit(SquareChosen(seat, (state.players[seat].position + d1 + d2 + state.speed) % 40))
            _move(ctx, seat, d1 + d2 + state.speed)
            _land(ctx, seat)
        else:  # decision: time-out demolishes on the opponent's most built square
            targets = _demolition_targets(state, seat)
            best = max(targets, key=lambda sq: (state.buildings[sq], -sq))
            _do_demolish(ctx, Demolish(seat, best))
    else:
        _end_turn(ctx)


def _liquidate_and_pay(ctx: _Ctx, seat: int) -> None:
    """E2 (decision): sell and mortgage, cheapest first, until the debt is covered; else bankruptcy."""
    state = ctx.state
    due = state.payments[0]
    cfg = state.config
    board = cfg.board
    while state.players[seat].cash < due.amount:
        built = [sq for sq in _owned(state, seat) if state.buildings[sq]]
        if built:
            cost = min(board.squares[sq].house_cost for sq in built)
            cheapest = [sq for sq in built if board.squares[sq].house_cost == cost]
            _do_sell(ctx, SellBuilding(seat, max(cheapest, key=lambda sq: (state.buildings[sq], -sq))))
            continue
        free = [sq for sq in _owned(state, seat) if state.mortgaged_round[sq] < 0]
        if not free:
            _bankrupt(ctx, seat, due.creditor)
            return
        _do_mortgage(ctx, Mortgage(seat, min(free, key=lambda sq: (board.squares[sq].mortgage_value, sq))))
    _do_pay(ctx, Pay(seat))


def _check_request_pause(state: TableState, cmd: RequestPause) -> None:
    _active(state, cmd.seat)
    if state.paused or state.vote_deadline >= 0:
        raise RuleViolation("E5", "a pause is already asked for or on")


def _do_request_pause(ctx: _Ctx, cmd: RequestPause) -> None:
    ctx.emit(PauseRequested(cmd.seat))
    _pause_if_agreed(ctx)


def _check_vote(state: TableState, cmd: VotePause) -> None:
    _active(state, cmd.seat)
    if state.vote_deadline < 0:
        raise RuleViolation("E5", "no pause vote is open")
    if cmd.seat in state.pause_votes:
        raise RuleViolation("E5", "you have already voted")
    if type(getattr(cmd, "yes")) is not bool:  # noqa: B009  # untyped read: see _check_tick
        raise RuleViolation("E5", "a vote is yes or no")


def _do_vote(ctx: _Ctx, cmd: VotePause) -> None:
    ctx.emit(PauseVoted(cmd.seat, cmd.yes))
    if not cmd.yes:
        ctx.emit(PauseRejected("vote"))
        return
    _pause_if_agreed(ctx)


def _pause_if_agreed(ctx: _Ctx) -> None:
    state = ctx.state
    if all(s in state.pause_votes for s in state.active_seats):  # E5: unanimous
        ctx.emit(GamePaused())


def _check_back(state: TableState, cmd: ConfirmBack) -> None:
    _active(state, cmd.seat)
    if not state.paused or state.resume_at >= 0:
        raise RuleViolation("E5", "the game is not waiting for players to come back")
    if cmd.seat in state.back:
        raise RuleViolation("E5", "you have already confirmed")


def _do_back(ctx: _Ctx, cmd: ConfirmBack) -> None:
    state = ctx.state
    ctx.emit(BackConfirmed(cmd.seat))
    if all(s in state.back for s in state.active_seats):
        ctx.emit(ResumeScheduled(state.clock + state.config.clock.resume_countdown_seconds * 1000))


def _active(state: TableState, seat: int) -> None:
    if state.finished:
        raise RuleViolation("D5", "the game is over")
    if type(seat) is not int or not 0 <= seat < len(state.players) or state.players[seat].bankrupt:
        raise RuleViolation("G1", f"seat {seat!r} is not an active player")


# -- shared steps of the effects -------------------------------------------------


def _move(ctx: _Ctx, seat: int, steps: int) -> None:
    """Move forward, paying the salary when passing or landing on start (G5, G6)."""
    state = ctx.state
    start = state.players[seat].position
    end = (start + steps) % 40
    ctx.emit(Moved(seat, start, end))
    if start + steps >= 40 and salary_paid(state):
        cfg = state.config
        ctx.emit(BankPaid(seat, cfg.salary, "salary"))
        if end == 0 and cfg.start_bonus:
            ctx.emit(BankPaid(seat, cfg.start_bonus, "start_bonus"))


def salary_paid(state: TableState) -> bool:
    """E3: salary (and the start bonus) stop at the salary-stop minute."""
    stop = state.config.clock.salary_stop_minute
    return stop is None or state.minute < stop


def rent_tax_percent(state: TableState) -> int:
    """E4: the share of rent that goes to the bank at the current game minute."""
    clock = state.config.clock
    start = clock.tax_start_minute
    minute = state.minute
    if start is None or minute < start:
        return 0
    steps = (minute - start) // clock.tax_step_minutes
    return min(clock.tax_start_percent + steps * clock.tax_step_percent, clock.tax_max_percent)


def _move_to(ctx: _Ctx, seat: int, target: int) -> None:
    steps = (target - ctx.state.players[seat].position) % 40
    _move(ctx, seat, steps or 40)


def _land(ctx: _Ctx, seat: int, card: Card | None = None) -> None:
    """Resolve the square the player's token rests on (P1, P2, taxes, C4, K1, G7)."""
    state = ctx.state
    pos = state.players[seat].position
    square = state.config.board.squares[pos]
    kind = square.kind
    if kind is _PROPERTY or kind is _RAILROAD or kind is _UTILITY:
        owner = state.owner[pos]
        if owner == BANK:
            ctx.emit(PurchaseOffered(seat, pos, square.price))
        elif (
            owner != seat
            and state.mortgaged_round[pos] < 0
            and (state.config.rent_while_jailed or not state.players[owner].in_jail)
            and not teammates(state, seat, owner)
        ):
            if card is not None and card.effect is _UTILITY_THROW:  # C1: throw the dice for this rent
                ctx.emit(
                    DiceThrown(
                        seat, rng.die(state.rng_seed, state.rng_counter), rng.die(state.rng_seed, state.rng_counter + 1)
                    )
                )
            due = rent(state, pos, card)
            if state.config.rent_claims:  # H2: due only if the owner claims it in time
                ctx.emit(RentClaimable(seat, owner, pos, due))
                return
            _charge(ctx, seat, owner, due, "rent", bank_share=due * rent_tax_percent(state) // 100)
    elif kind is _TAX:
        _charge(ctx, seat, BANK, square.tax, "tax")
    elif kind is _CHANCE:
        _draw_card(ctx, seat, "chance")
    elif kind is _CASINO:
        if state.config.casino.enabled:
            if "casino" in state.config.external:  # what the casino service needs to take the bet
                deadline = state.clock if state.timed_out else state.turn_deadline
                ctx.emit(casino.CasinoOpened(seat, state.players[seat].cash, deadline))
            else:
                ctx.emit(casino.CasinoOpened(seat))
    elif kind is _GO_TO_JAIL:
        ctx.emit(SentToJail(seat, "go_to_jail"))
        _end_turn(ctx)
    elif kind is _CHEST:
        _draw_card(ctx, seat, "chest")


def rent(state: TableState, square: int, card: Card | None = None) -> int:
    """The rent due on `square` now (P2-P4); `card` is a chance card that moved the payer."""
    cfg = state.config
    board = cfg.board
    sq = board.squares[square]
    owner = state.owner[square]
    if sq.kind is _PROPERTY:
        level = state.buildings[square]
        if level:
            return sq.rents[level]
        return sq.rents[0] * (2 if state.owns_group(owner, sq.group) else 1)  # P3
    owners = state.owner
    if sq.kind is _RAILROAD:
        count = sum(1 for s in board.railroads if owners[s] == owner)
        return board.railroad_rents[count - 1] * (card.multiplier if card else 1)
    count = sum(1 for s in board.utilities if owners[s] == owner)
    multiplier = board.utility_multipliers[-1] if card else board.utility_multipliers[count - 1]
    if card is not None and card.effect is _UTILITY_THROW:  # C1: ten times the card's own throw
        return state.throw * multiplier
    return sum(state.dice) * multiplier


def teammates(state: TableState, a: int, b: int) -> bool:
    """X4: seats 0 and 2 play against 1 and 3."""
    return state.config.teams and a != b and a % 2 == b % 2


def _charge(
    ctx: _Ctx, debtor: int, creditor: int, amount: int, reason: str, then_move: bool = False, bank_share: int = 0
) -> None:
    """A mandatory payment: pending until paid (D1), or bankruptcy if it cannot be raised (D2)."""
    if amount <= 0:
        return
    state = ctx.state
    owed = amount + sum(p.amount for p in state.payments if p.debtor == debtor) if state.payments else amount
    if state.players[debtor].cash < owed and state.raisable(debtor) < owed:
        _bankrupt(ctx, debtor, creditor)
        return
    ctx.emit(PaymentDue(debtor, creditor, amount, reason, then_move, bank_share))


def _draw_card(ctx: _Ctx, seat: int, deck: str) -> None:
    state = ctx.state
    cfg = state.config
    chance = deck == "chance"
    if not (state.deck if chance else state.chest):  # C4: reshuffled when empty (kept jail cards stay out)
        held = {c for p in state.players for c in p.jail_cards}
        ids = _deck_ids(cfg) if chance else tuple(card.id for card in cfg.chest_deck)
        pile = tuple(c for c in ids if c not in held)
        ctx.emit(DeckShuffled(deck, rng.shuffled(pile, state.rng_seed, state.rng_counter)))
    card = cfg.chance_deck[state.deck[0]] if chance else cfg.chest_deck[state.chest[0] - CHEST_BASE]
    ctx.emit(CardDrawn(seat, deck, card.id))
    effect = card.effect
    if effect is Effect.BANK_PAYS:
        ctx.emit(BankPaid(seat, card.amount, "card"))
    elif effect is Effect.PAY_BANK:
        _charge(ctx, seat, BANK, card.amount, "card")
    elif effect is Effect.COLLECT_EACH:
        for other in _others(state, seat):
            _charge(ctx, other, seat, card.amount, "card")
    elif effect is Effect.PAY_EACH:
        others = _others(state, seat)
        if state.raisable(seat) < card.amount * len(others):
            _bankrupt(ctx, seat, BANK)  # decision: several creditors -> bankrupt to the bank
            return
        for other in others:
            ctx.emit(PaymentDue(seat, other, card.amount, "card"))
    elif effect is Effect.ADVANCE_TO:
        _move_to(ctx, seat, card.target)
        _land(ctx, seat)
    elif effect is Effect.GO_TO_JAIL:
        ctx.emit(SentToJail(seat, "card"))
        _end_turn(ctx)
    elif effect is Effect.NEAREST_RAILROAD or effect is Effect.NEAREST_UTILITY or effect is _UTILITY_THROW:
        kind = Kind.RAILROAD if effect is Effect.NEAREST_RAILROAD else Kind.UTILITY
        _move_to(ctx, seat, _nearest(state, state.players[seat].position, kind))
        _land(ctx, seat, card)
    elif effect is Effect.BACK:
        start = state.players[seat].position
        ctx.emit(Moved(seat, start, (start - card.amount) % 40))
        _land(ctx, seat)
    elif effect is Effect.REPAIRS:
        houses = hotels = 0
        for sq in cfg.board.purchasable:
            if state.owner[sq] == seat:
                level = state.buildings[sq]
                if level == 5:
                    hotels += 1
                else:
                    houses += level
        _charge(ctx, seat, BANK, houses * card.amount + hotels * card.amount2, "repairs")
    elif effect is Effect.DEMOLISH and _demolition_targets(state, seat):
        ctx.emit(ChoiceOffered(seat, "demolish"))
    # JAIL_FREE: kept by the drawer (evolve); nothing else happens.


def _start_auction(
    ctx: _Ctx,
    square: int,
    reason: str,
    after: int,
    excluded: int,
    seller: int = BANK,
    among: tuple[int, ...] = (),
) -> None:
    state = ctx.state
    order = state.active_seats
    i = order.index(after) if after in order else -1
    rotated = order[i + 1 :] + order[: i + 1]
    bidders = tuple(s for s in rotated if s != excluded and (not among or s in among))
    auction_id = state.next_auction_id
    if not bidders:
        settled = auctions.AuctionSettled(auction_id, square, BANK, 0)
        ctx.emit(settled)
        _after_auction(ctx, settled, reason)
        return
    rules = state.config.auction
    price = state.config.board.squares[square].price
    start = price if rules.start_at_price or reason in _PRICE_START else rules.min_first_bid
    limits: tuple[int, ...] = ()
    bid_ms = 0
    if "auction" in state.config.external:  # what the auction service needs to run it alone
        mortgage_value = 0 if reason in _BUILDING_AUCTIONS else state.config.board.squares[square].mortgage_value
        limits = tuple(_raisable_for_bid(state, seat, mortgage_value) for seat in bidders)
        bid_ms = state.config.clock.bid_seconds * 1000
    ctx.emit(
        auctions.AuctionStarted(auction_id, square, reason, bidders, start, rules.increment, seller, limits, bid_ms)
    )


def _after_auction(ctx: _Ctx, settled: auctions.AuctionSettled, reason: str, seller: int = BANK) -> None:
    if settled.winner != BANK:
        if seller != BANK:  # X3: the seller gets the price less the lifting cost
            cfg = ctx.state.config
            lift = cfg.lift_cost(cfg.board.squares[settled.square].price)
            _charge(ctx, settled.winner, seller, settled.price, "auction", bank_share=min(lift, settled.price))
        else:
            _charge(ctx, settled.winner, BANK, settled.price, "auction")  # A3
    if reason == "mortgage_expired":
        _expire_mortgages(ctx)
    elif reason == "bankrupt":
        _auction_returned(ctx)


def _auction_returned(ctx: _Ctx) -> None:
    """D4 (hasbro): the next property a bankruptcy returned to the bank goes to auction, every
    active player bidding from the minimum, starting after the current player."""
    state = ctx.state
    if state.auction is not None or state.finished or not state.auction_queue:
        return
    _start_auction(ctx, state.auction_queue[0], "bankrupt", after=state.current, excluded=BANK)


def _bid_limit(state: TableState, cmd: Command) -> int:
    """A3: the most a bidder could pay, the won square's mortgage value included.

    Only worked out when the bid exceeds the bidder's cash (the common case is cheap).
    """
    seat = cmd.seat
    owed = sum(p.amount for p in state.payments if p.debtor == seat)
    cash = state.players[seat].cash - owed
    if not isinstance(cmd, auctions.Bid) or cmd.amount <= cash:
        return cash
    auction = state.auction
    assert auction is not None
    if auction.reason in _BUILDING_AUCTIONS:  # P10: a building is won, not a square to mortgage
        return state.raisable(seat) - owed
    return state.raisable(seat) - owed + state.config.board.squares[auction.square].mortgage_value


def _raisable_for_bid(state: TableState, seat: int, mortgage_value: int) -> int:
    """A3: the most `seat` could pay for the auctioned square (what `_bid_limit` allows)."""
    owed = sum(p.amount for p in state.payments if p.debtor == seat)
    return max(state.players[seat].cash - owed, state.raisable(seat) - owed + mortgage_value)


def _expire_mortgages(ctx: _Ctx) -> None:
    """M3: the current player's first mortgage older than the limit goes to auction."""
    state = ctx.state
    limit = state.config.mortgage_expiry_rounds
    if limit is None or state.round <= limit or state.auction is not None or state.finished:
        return
    cutoff = state.round - limit
    for mortgaged in state.mortgaged_round:  # the common case: no mortgage that old
        if 0 <= mortgaged <= cutoff:
            break
    else:
        return
    seat = state.current
    for sq in state.config.board.purchasable:
        if state.owner[sq] == seat and 0 <= state.mortgaged_round[sq] <= cutoff:
            ctx.emit(MortgageExpired(seat, sq))
            _start_auction(ctx, sq, "mortgage_expired", after=seat, excluded=BANK)
            return


def _bankrupt(ctx: _Ctx, seat: int, creditor: int, cause: str = "debt") -> None:
    """D2-D5: out of the game; the last player (Team 2v2: team) left wins."""
    state = ctx.state
    was_current = seat == state.current
    cfg = state.config
    received: tuple[int, ...] = ()
    if creditor != BANK and cfg.mortgage_transfer_fee_percent is not None:  # M4 follows D3
        received = tuple(sq for sq in _owned(state, seat) if state.mortgaged_round[sq] >= 0)
    ctx.emit(PlayerBankrupt(seat, creditor, len(state.active_seats), cause))
    limit = cfg.end_after_bankruptcies
    if limit is not None and len(state.eliminated) >= limit and not _game_decided(state):
        _end_by_worth(ctx, "short_game")  # H3, H4: the short game ends here, by worth (H6)
        return
    for sq in received:
        if state.owner[sq] == creditor and state.mortgaged_round[sq] >= 0 and not _game_decided(state):
            _mortgage_fee(ctx, creditor, sq)
    active = state.active_seats
    if state.auction is not None and not _game_decided(state):  # the bankrupt bidder left an auction
        reason, seller = state.auction.reason, state.auction.seller
        settled = auctions.result_if_closed(state.auction)
        if settled is not None:
            ctx.emit(settled)
            _after_auction(ctx, settled, reason, seller)
    if state.vote_deadline >= 0 and not _game_decided(state):
        _pause_if_agreed(ctx)  # E5: the one who had not answered has left
    if _game_decided(state):
        if state.config.teams:  # X4: the last team standing wins; the team places are 1 and 2
            team = active[0] % 2
            places = tuple(1 if p.seat % 2 == team else 2 for p in state.players)
            ctx.emit(GameEnded(active[0], places, "last_team", state.game_ms, state.config.clock.scale))
        else:
            places = tuple(p.place if p.bankrupt else 1 for p in state.players)
            ctx.emit(GameEnded(active[0], places, "last_player", state.game_ms, state.config.clock.scale))
    elif was_current:
        _end_turn(ctx)
    if state.auction_queue and not state.finished:  # D4
        _auction_returned(ctx)


def _game_decided(state: TableState) -> bool:
    """D5: one player left, or (X4) one team."""
    active = state.active_seats
    if state.config.teams:
        return len({s % 2 for s in active}) <= 1
    return len(active) <= 1


def _end_turn(ctx: _Ctx) -> None:
    """End the current turn and start the next active player's (G1)."""
    state = ctx.state
    current = state.current
    ctx.emit(TurnEnded(current))
    order = state.order
    players = state.players
    n = len(order)
    i = order.index(current)
    nxt = i + 1
    while players[order[nxt % n]].bankrupt:
        nxt += 1
    new_round = state.round + 1 if nxt >= n else state.round
    cap = state.config.round_cap
    if cap is not None and new_round > cap:
        _end_by_worth(ctx, "round_cap")
        return
    limit = state.config.time_limit_minutes
    if limit is not None and state.game_ms >= limit * 60_000:  # H5: the agreed end time has come
        _end_by_worth(ctx, "time_limit")
        return
    ctx.emit(TurnStarted(order[nxt % n], new_round))
    _expire_mortgages(ctx)


def _end_by_worth(ctx: _Ctx, reason: str) -> None:
    state = ctx.state
    active = state.active_seats
    ranked = sorted(active, key=lambda s: (-state.net_worth(s), active.index(s)))
    places = [p.place for p in state.players]
    for place, seat in enumerate(ranked, start=1):
        places[seat] = place
    ctx.emit(GameEnded(ranked[0], tuple(places), reason, state.game_ms, state.config.clock.scale))


def _others(state: TableState, seat: int) -> list[int]:
    """The other active players in turn order, starting after `seat`."""
    order = state.active_seats
    i = order.index(seat)
    return order[i + 1 :] + order[:i]


def _nearest(state: TableState, start: int, kind: Kind) -> int:
    squares = state.config.board.squares
    for step in range(1, 41):
        sq = (start + step) % 40
        if squares[sq].kind is kind:
            return sq
    raise ValueError(f"no {kind} square on the board")


def _owned(state: TableState, seat: int) -> list[int]:
    return [sq for sq in state.config.board.purchasable if state.owner[sq] == seat]


def _deck_ids(cfg: TableConfig) -> tuple[int, ...]:
    return tuple(card.id for card in cfg.chance_deck)


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


def _ev_turn_order(s: TableState, e: TurnOrderSet) -> None:
    s.order = list(e.order)
    s.rng_counter += rng.shuffle_draws(len(e.order))


def _ev_deck(s: TableState, e: DeckShuffled) -> None:
    if e.deck == "chance":
        s.deck = list(e.cards)
    else:
        s.chest = list(e.cards)
    s.rng_counter += rng.shuffle_draws(len(e.cards))


def _ev_turn_started(s: TableState, e: TurnStarted) -> None:
    s.turn_deadline = s.clock + s.config.clock.turn_seconds * 1000  # E1
    s.timed_out = False
    s.mr_monopoly = False
    s.choice = ""
    s.speed = 0
    s.current = e.seat
    s.round = e.round
    s.turn_no += 1
    s.rolled = False
    s.roll_again = False
    s.doubles = 0
    s.builds.clear()
    s.proposals = 0


def _ev_dice(s: TableState, e: DiceRolled) -> None:
    s.rng_counter += 3 if e.speed else 2
    s.rolled = True
    s.dice = (e.d1, e.d2)
    s.speed = e.speed
    s.mr_monopoly = e.speed == SPEED_MR_MONOPOLY
    player = s.players[e.seat]
    double = e.d1 == e.d2 and e.d1 != e.speed  # X6: a triple is not doubles
    if player.in_jail:
        s.roll_again = False  # J3
        if not double:
            player.jail_turns += 1
    else:
        if double:
            s.doubles += 1
        s.roll_again = double and s.doubles < 3  # G3, G4


def _ev_moved(s: TableState, e: Moved) -> None:
    s.players[e.seat].position = e.to_square


def _ev_bank_paid(s: TableState, e: BankPaid) -> None:
    s.players[e.seat].cash += e.amount
    s.bank_out += e.amount


def _ev_offered(s: TableState, e: PurchaseOffered) -> None:
    s.offer = e.square


def _ev_bought(s: TableState, e: PropertyBought) -> None:
    s.owner[e.square] = e.seat
    s.players[e.seat].cash -= e.price
    s.bank_in += e.price
    s.offer = -1


def _ev_declined(s: TableState, e: PurchaseDeclined) -> None:
    s.offer = -1


def _ev_payment_due(s: TableState, e: PaymentDue) -> None:
    s.payments.append(Payment(e.debtor, e.creditor, e.amount, e.reason, e.then_move, e.bank_share))
    if len(s.payments) == 1:
        _start_payment_timer(s)


def _start_payment_timer(s: TableState) -> None:
    """D1, E1: a debt (too little cash) or another player's payment gets the debt timer;
    the current player's affordable payment runs on the turn timer."""
    due = s.payments[0]
    if due.debtor != s.current or s.players[due.debtor].cash < due.amount:
        due.deadline = s.clock + s.config.clock.debt_seconds * 1000


def _ev_payment_made(s: TableState, e: PaymentMade) -> None:
    paid = s.payments.pop(0)
    s.players[e.debtor].cash -= e.amount
    if e.creditor == BANK:
        s.bank_in += e.amount
    else:
        s.players[e.creditor].cash += e.amount - e.bank_share
        s.bank_in += e.bank_share
    if s.payments:
        _start_payment_timer(s)
    if paid.deadline >= 0:  # back from a debt or another player's payment
        _restart_turn_timer(s)


def _restart_turn_timer(s: TableState) -> None:
    """Decision: the turn timer starts again when play comes back from other players' decisions."""
    s.turn_deadline = s.clock + s.config.clock.turn_seconds * 1000


def _ev_card(s: TableState, e: CardDrawn) -> None:
    if e.deck == "chance":
        pile = s.deck
        card_id = pile.pop(0)
        card = s.config.chance_deck[card_id]
    else:
        pile = s.chest
        card_id = pile.pop(0)
        card = s.config.chest_deck[card_id - CHEST_BASE]
    if card.effect is _JAIL_FREE:
        s.players[e.seat].jail_cards.append(card_id)
    elif s.config.cards_to_bottom:  # C3: to the bottom of its deck
        pile.append(card_id)


def _return_card(s: TableState, card_id: int) -> None:
    """C3: a Get Out of Jail Free card goes back to the bottom of its own deck."""
    (s.chest if card_id >= CHEST_BASE else s.deck).append(card_id)


def _ev_jailed(s: TableState, e: SentToJail) -> None:
    s.mr_monopoly = False
    player = s.players[e.seat]
    player.position = JAIL_SQUARE
    player.in_jail = True
    player.jail_turns = 0
    s.roll_again = False


def _ev_left_jail(s: TableState, e: LeftJail) -> None:
    player = s.players[e.seat]
    player.in_jail = False
    player.jail_turns = 0
    if e.how == "card":  # C3/C4: the used card goes to the bottom of the pile
        _return_card(s, player.jail_cards.pop(0))
    if e.fine:
        player.cash -= e.fine
        s.bank_in += e.fine


def _ev_built(s: TableState, e: BuildingBuilt) -> None:
    s.buildings[e.square] = e.level
    s.players[e.seat].cash -= e.cost
    s.bank_in += e.cost
    s.builds.append(s.config.board.squares[e.square].group)


def _ev_sold(s: TableState, e: BuildingSold) -> None:
    s.buildings[e.square] = e.level
    s.players[e.seat].cash += e.refund
    s.bank_out += e.refund


def _ev_mortgaged(s: TableState, e: PropertyMortgaged) -> None:
    s.mortgaged_round[e.square] = s.round
    s.players[e.seat].cash += e.amount
    s.bank_out += e.amount


def _ev_lifted(s: TableState, e: MortgageLifted) -> None:
    s.mortgaged_round[e.square] = -1
    s.players[e.seat].cash -= e.cost
    s.bank_in += e.cost
    payments = s.payments
    if payments and s.config.mortgage_transfer_fee_percent is not None:  # M4: lifted at once, no fee
        first = payments[0]
        s.payments = [p for p in payments if not (p.square == e.square and p.reason == "mortgage_fee")]
        if s.payments and s.payments[0] is not first:
            _start_payment_timer(s)
        if first not in s.payments and first.deadline >= 0:
            _restart_turn_timer(s)


def _ev_expired(s: TableState, e: MortgageExpired) -> None:
    s.owner[e.square] = BANK
    s.mortgaged_round[e.square] = -1


def _ev_auction_started(s: TableState, e: auctions.AuctionStarted) -> None:
    if s.auction_queue and e.reason == "bankrupt":  # D4
        s.auction_queue.remove(e.square)
    s.auction = auctions.open_auction(e)
    s.next_auction_id = e.auction_id + 1
    s.bid_deadline = s.clock + s.config.clock.bid_seconds * 1000  # E1, A1


def _ev_auction_move(s: TableState, e: Event) -> None:
    assert s.auction is not None
    auctions.evolve(s.auction, e)
    s.bid_deadline = s.clock + s.config.clock.bid_seconds * 1000


def _ev_auction_settled(s: TableState, e: auctions.AuctionSettled) -> None:
    seller = s.auction.seller if s.auction is not None else BANK
    reason = s.auction.reason if s.auction is not None else ""
    s.auction = None
    s.next_auction_id = max(s.next_auction_id, e.auction_id + 1)
    if e.winner != BANK and reason in _BUILDING_AUCTIONS:  # P10: a building to place, not a square
        s.won_buildings.append((e.winner, _BUILDING_AUCTIONS[reason]))
    elif e.winner != BANK:
        s.owner[e.square] = e.winner
        if seller != BANK:  # X3: sold out of its mortgage
            s.mortgaged_round[e.square] = -1
    _restart_turn_timer(s)


def _ev_trade_proposed(s: TableState, e: TradeProposed) -> None:
    s.trade = TradeOffer(
        e.trade_id, e.proposer, e.counterparty, e.give_cash, e.give_squares, e.take_cash, e.take_squares
    )
    s.proposals += 1
    s.next_trade_id = e.trade_id + 1


def _ev_trade_executed(s: TableState, e: TradeExecuted) -> None:
    apply_offer(s, e)
    s.next_trade_id = max(s.next_trade_id, e.trade_id + 1)
    if s.trade is not None:  # the proposal held the game (a trade service's proposals don't)
        s.trade = None
        _restart_turn_timer(s)


def _ev_trade_declined(s: TableState, e: TradeDeclined) -> None:
    s.trade = None
    _restart_turn_timer(s)


def _ev_casino_opened(s: TableState, e: casino.CasinoOpened) -> None:
    s.casino = True


def _ev_bet_placed(s: TableState, e: casino.BetPlaced) -> None:
    s.players[e.seat].cash -= e.stake
    s.bank_in += e.stake
    s.jackpot += e.pool_add
    s.bank_out += e.pool_add


def _ev_bet_settled(s: TableState, e: casino.BetSettled) -> None:
    s.players[e.seat].cash += e.payout + e.jackpot
    s.bank_out += e.payout
    s.jackpot -= e.jackpot
    s.casino = False
    s.rng_counter += e.draws


def _ev_bet_declined(s: TableState, e: casino.BetDeclined) -> None:
    s.casino = False


def _ev_bankrupt(s: TableState, e: PlayerBankrupt) -> None:
    """D3/D4 (online): to a player, buildings are sold to the bank first and
    everything goes to the creditor; to the bank, the properties return
    unowned, without buildings or mortgages."""
    cfg = s.config
    player = s.players[e.seat]
    to_player = e.creditor != BANK
    partner = e.seat ^ 2 if cfg.teams and e.seat ^ 2 < len(s.players) else -1
    heir = partner if not to_player and partner >= 0 and not s.players[partner].bankrupt else -1
    for sq in cfg.board.purchasable:
        if s.owner[sq] != e.seat:
            continue
        if heir >= 0:  # X4: bankrupt to the bank, the teammate takes the properties over as they are
            s.owner[sq] = heir
            continue
        level = s.buildings[sq]
        if level:
            if to_player:
                levels = cfg.hotel_after_houses + 1 if level == 5 else level
                refund = levels * cfg.sale_value(cfg.board.squares[sq].house_cost)
                player.cash += refund
                s.bank_out += refund
            s.buildings[sq] = 0
        if to_player:
            s.owner[sq] = e.creditor
        else:
            s.owner[sq] = BANK
            s.mortgaged_round[sq] = -1
            if cfg.bankrupt_auction:  # D4: auctioned at once
                s.auction_queue.append(sq)
    if to_player:
        s.players[e.creditor].cash += player.cash
    else:
        s.bank_in += player.cash
    player.cash = 0
    if to_player and cfg.jail_cards_to_creditor:  # D3 (hasbro)
        s.players[e.creditor].jail_cards.extend(player.jail_cards)
    else:
        for card_id in player.jail_cards:
            _return_card(s, card_id)
    player.jail_cards.clear()
    if s.won_buildings:  # P10: unplaced buildings go back to the bank
        s.won_buildings = [w for w in s.won_buildings if w[0] != e.seat]
    if s.claim and e.seat in (s.claim[0], s.claim[1]):
        s.claim = ()
    player.bankrupt = True
    player.in_jail = False
    player.place = e.place
    s.eliminated.append(e.seat)
    s.payments = [p for p in s.payments if p.debtor != e.seat and p.creditor != e.seat]
    if s.trade is not None and e.seat in (s.trade.proposer, s.trade.counterparty):
        s.trade = None
    if s.auction is not None:
        auctions.withdraw(s.auction, e.seat)
    if e.seat in s.pause_votes:
        s.pause_votes.remove(e.seat)
    if e.seat in s.back:
        s.back.remove(e.seat)
    if e.seat == s.current:
        s.offer = -1
        s.casino = False
        s.roll_again = False


def _ev_turn_ended(s: TableState, e: TurnEnded) -> None:
    if not s.timed_out:
        s.missed[e.seat] = 0  # E2: the missed turns must come in a row


def _ev_clock(s: TableState, e: ClockAdvanced) -> None:
    s.clock = e.now


def _ev_turn_timed_out(s: TableState, e: TurnTimedOut) -> None:
    s.timed_out = True
    s.missed[e.seat] = e.missed


def _ev_nothing(s: TableState, e: Event) -> None:
    """An event that records what happened; its effects come as the events after it."""


def _ev_pause_requested(s: TableState, e: PauseRequested) -> None:
    s.pause_votes = [e.seat]
    s.vote_deadline = s.clock + s.config.clock.pause_vote_seconds * 1000


def _ev_pause_voted(s: TableState, e: PauseVoted) -> None:
    if e.yes:
        s.pause_votes.append(e.seat)


def _ev_pause_rejected(s: TableState, e: PauseRejected) -> None:
    s.pause_votes = []
    s.vote_deadline = -1


def _ev_paused(s: TableState, e: GamePaused) -> None:
    s.pause_votes = []
    s.vote_deadline = -1
    s.paused = True
    s.paused_at = s.clock
    s.back = []


def _ev_back(s: TableState, e: BackConfirmed) -> None:
    s.back.append(e.seat)


def _ev_resume_scheduled(s: TableState, e: ResumeScheduled) -> None:
    s.resume_at = e.at


def _ev_resumed(s: TableState, e: GameResumed) -> None:
    """E5: every timer was frozen; it goes on from where it stood."""
    s.paused = False
    s.resume_at = -1
    s.back = []
    s.paused_total += e.paused_ms
    s.turn_deadline += e.paused_ms
    s.bid_deadline += e.paused_ms
    for due in s.payments:
        if due.deadline >= 0:
            due.deadline += e.paused_ms


def _ev_board_dealt(s: TableState, e: BoardDealt) -> None:
    for sq, seat in zip(e.squares, e.owners, strict=True):
        s.owner[sq] = seat
    s.rng_counter += rng.shuffle_draws(len(s.config.board.purchasable))


def _ev_choice_offered(s: TableState, e: ChoiceOffered) -> None:
    s.choice = e.kind


def _ev_choice_made(s: TableState, e: Event) -> None:
    s.choice = ""


def _ev_demolished(s: TableState, e: BuildingDemolished) -> None:
    s.choice = ""
    s.buildings[e.square] = e.level


def _ev_mr_monopoly(s: TableState, e: MrMonopolyMoved) -> None:
    s.mr_monopoly = False


def _ev_deeds_dealt(s: TableState, e: DeedsDealt) -> None:
    for sq, seat, price in zip(e.squares, e.owners, e.prices, strict=True):
        s.owner[sq] = seat
        s.players[seat].cash -= price
        s.bank_in += price
    s.rng_counter += rng.shuffle_draws(len(s.config.board.purchasable))


def _ev_dice_thrown(s: TableState, e: DiceThrown) -> None:
    s.rng_counter += 2
    s.throw = e.d1 + e.d2


def _ev_fee_due(s: TableState, e: MortgageFeeDue) -> None:
    s.payments.append(Payment(e.seat, BANK, e.amount, "mortgage_fee", square=e.square))
    if len(s.payments) == 1:
        _start_payment_timer(s)


def _ev_sold_down(s: TableState, e: BuildingsSoldDown) -> None:
    for sq, level in zip(e.squares, e.levels, strict=True):
        s.buildings[sq] = level
    s.players[e.seat].cash += e.refund
    s.bank_out += e.refund


def _ev_cards_offered(s: TableState, e: TradeCardsOffered) -> None:
    if s.trade is not None:
        s.trade = replace(s.trade, give_cards=e.give_cards, take_cards=e.take_cards)


def _ev_cards_traded(s: TableState, e: JailCardsTraded) -> None:
    p, o = s.players[e.proposer], s.players[e.counterparty]
    for card_id in e.give_cards:
        p.jail_cards.remove(card_id)
        o.jail_cards.append(card_id)
    for card_id in e.take_cards:
        o.jail_cards.remove(card_id)
        p.jail_cards.append(card_id)


def _ev_claimable(s: TableState, e: RentClaimable) -> None:
    s.claim = (e.payer, e.owner, e.square, e.amount)


def _ev_claim_closed(s: TableState, e: Event) -> None:
    s.claim = ()


def _ev_building_placed(s: TableState, e: BuildingPlaced) -> None:
    s.buildings[e.square] = e.level
    s.won_buildings.remove((e.seat, 5 if e.level == 5 else 1))


def _ev_game_ended(s: TableState, e: GameEnded) -> None:
    s.finished = True
    s.winner = e.winner
    s.end_reason = e.reason
    for player, place in zip(s.players, e.places, strict=True):
        player.place = place


_EVOLVE: dict[type, Callable[[TableState, Any], None]] = {
    TurnOrderSet: _ev_turn_order,
    DeckShuffled: _ev_deck,
    TurnStarted: _ev_turn_started,
    DiceRolled: _ev_dice,
    Moved: _ev_moved,
    BankPaid: _ev_bank_paid,
    PurchaseOffered: _ev_offered,
    PropertyBought: _ev_bought,
    PurchaseDeclined: _ev_declined,
    PaymentDue: _ev_payment_due,
    PaymentMade: _ev_payment_made,
    CardDrawn: _ev_card,
    SentToJail: _ev_jailed,
    LeftJail: _ev_left_jail,
    BuildingBuilt: _ev_built,
    BuildingSold: _ev_sold,
    PropertyMortgaged: _ev_mortgaged,
    MortgageLifted: _ev_lifted,
    MortgageExpired: _ev_expired,
    auctions.AuctionStarted: _ev_auction_started,
    auctions.BidPlaced: _ev_auction_move,
    auctions.BidPassed: _ev_auction_move,
    auctions.AuctionSettled: _ev_auction_settled,
    TradeProposed: _ev_trade_proposed,
    TradeExecuted: _ev_trade_executed,
    TradeDeclined: _ev_trade_declined,
    casino.CasinoOpened: _ev_casino_opened,
    casino.BetPlaced: _ev_bet_placed,
    casino.BetSettled: _ev_bet_settled,
    casino.BetDeclined: _ev_bet_declined,
    PlayerBankrupt: _ev_bankrupt,
    TurnEnded: _ev_turn_ended,
    GameEnded: _ev_game_ended,
    ClockAdvanced: _ev_clock,
    TurnTimedOut: _ev_turn_timed_out,
    TimedOut: _ev_nothing,
    PauseRequested: _ev_pause_requested,
    PauseVoted: _ev_pause_voted,
    PauseRejected: _ev_pause_rejected,
    GamePaused: _ev_paused,
    BackConfirmed: _ev_back,
    ResumeScheduled: _ev_resume_scheduled,
    GameResumed: _ev_resumed,
    BoardDealt: _ev_board_dealt,
    ChoiceOffered: _ev_choice_offered,
    BusMoveChosen: _ev_choice_made,
    SquareChosen: _ev_choice_made,
    BuildingDemolished: _ev_demolished,
    MrMonopolyMoved: _ev_mr_monopoly,
    DeedsDealt: _ev_deeds_dealt,
    DiceThrown: _ev_dice_thrown,
    MortgageFeeDue: _ev_fee_due,
    BuildingsSoldDown: _ev_sold_down,
    TradeCardsOffered: _ev_cards_offered,
    JailCardsTraded: _ev_cards_traded,
    RentClaimable: _ev_claimable,
    RentClaimed: _ev_claim_closed,
    RentClaimLapsed: _ev_claim_closed,
    BuildingPlaced: _ev_building_placed,
}

_RULES: dict[type, tuple[Callable[[TableState, Any], None], Callable[[_Ctx, Any], None]]] = {
    Roll: (_check_roll, _do_roll),
    BuyProperty: (_check_buy, _do_buy),
    DeclineProperty: (_check_decline, _do_decline),
    Pay: (_check_pay, _do_pay),
    PayJailFine: (_check_jail_fine, _do_jail_fine),
    UseJailCard: (_check_jail_card, _do_jail_card),
    Build: (_check_build, _do_build),
    SellBuilding: (_check_sell, _do_sell),
    Mortgage: (_check_mortgage, _do_mortgage),
    LiftMortgage: (_check_lift, _do_lift),
    EndTurn: (_check_end_turn, _do_end_turn),
    Surrender: (_check_surrender, _do_surrender),
    auctions.Bid: (_check_bid, _do_bid),
    auctions.PassBid: (_check_bid, _do_bid),
    ProposeTrade: (_check_propose, _do_propose),
    AcceptTrade: (_check_accept, _do_accept),
    DeclineTrade: (_check_decline_trade, _do_decline_trade),
    casino.PlaceBet: (_check_bet, _do_bet),
    casino.DeclineBet: (_check_decline_bet, _do_decline_bet),
    Tick: (_check_tick, _do_tick),
    RequestPause: (_check_request_pause, _do_request_pause),
    VotePause: (_check_vote, _do_vote),
    ConfirmBack: (_check_back, _do_back),
    ChooseBusMove: (_check_bus, _do_bus),
    ChooseSquare: (_check_square, _do_square),
    Demolish: (_check_demolish, _do_demolish),
    AuctionMortgaged: (_check_mortgage_auction, _do_mortgage_auction),
    auctions.SettleAuction: (_check_settle_auction, _do_settle_auction),
    casino.SettleBet: (_check_settle_bet, _do_settle_bet),
    ExecuteTrade: (_check_execute_trade, _do_execute_trade),
    ClaimRent: (_check_claim, _do_claim),
}

#: Results of sub-protocols run by services: the platform sends them, a player's token never may.
SYSTEM_COMMANDS: frozenset[type] = frozenset({auctions.SettleAuction, casino.SettleBet, ExecuteTrade})
#: Player commands a service takes instead of the table when the sub-protocol is external.
EXTERNAL_COMMANDS: dict[str, frozenset[type]] = {
    "auction": frozenset({auctions.Bid, auctions.PassBid}),
    "trade": frozenset({ProposeTrade, AcceptTrade, DeclineTrade}),
    "casino": frozenset({casino.PlaceBet, casino.DeclineBet}),
}

# Each event class applies itself: one attribute lookup instead of a dict lookup on its type per event.
for _cls, _fn in _EVOLVE.items():
    _cls._evolve = staticmethod(_fn)  # type: ignore[attr-defined]

#: Every event type the engine emits, by name (for serialization).
EVENT_TYPES: dict[str, type] = {cls.__name__: cls for cls in (TableCreated, *_EVOLVE)}
#: Every command type the engine takes, by name.
COMMAND_TYPES: dict[str, type] = {cls.__name__: cls for cls in _RULES}
