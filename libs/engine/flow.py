"""The turn flow's shared steps, below every rule area: move, land, charge, bankrupt, end turn.

Each rule area (turn, jail, properties, buildings, mortgages, debts, decks,
delegated, clock) imports this module and never the other way round. Where a
step here must hand over to an area above (landing on a card square, a new
turn's mortgage expiry, M4's fee after a bankruptcy, a pause vote a bankrupt
seat leaves), it calls the area's function through `STEPS`, which the facade
(game.py) fills in once, so the import graph stays one-way.

Rules owned here:

* B1 squares; G1 the next active player (`end_turn`); G5, G6 salary and start
  bonus (`move`); G7 the Go to Jail square, K1 opening the casino, P1 the offer
  (`land`); P2-P4 rent (`rent`); X4 teammates pay no rent (`teammates`).
* D1 a mandatory payment (`charge`); D2-D5 bankruptcy and the winner (`bankrupt`);
  H3-H6 a game ended by worth, H5 the time limit, the round cap (`end_by_worth`).
* A1-A3 starting an auction and charging its winner (`start_auction`,
  `after_auction`); D4 (hasbro) the returned properties' auctions.
* E3, E4 the salary stop and the rent tax (`salary_paid`, `rent_tax_percent`), read by
  `move` and `land`.
* The shared checks: the seat the game waits for (`actor`, G2), an active player (`active`),
  one's own property (`property_of`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final

from . import auction as auctions
from . import casino, rng
from .board import Kind
from .cards import CHEST_BASE, Card, Effect
from .config import TableConfig
from .errors import RuleViolation
from .events import (
    BankPaid,
    DeckShuffled,
    DiceThrown,
    Event,
    GameEnded,
    Moved,
    PaymentDue,
    PlayerBankrupt,
    PurchaseOffered,
    RentClaimable,
    SentToJail,
    TurnEnded,
    TurnStarted,
)
from .reasons import AuctionReason, BankPaidReason, BankruptCause, EndReason, JailReason, PaymentReason
from .state import BANK, Phase, TableState

JAIL_SQUARE: Final = 10
# Module-level aliases of enum members used on hot paths (a member lookup is slow on Python 3.11).
# The constants of this module are `Final`: the native build reads them as C constants rather
# than from the module's dict at every use.
_PROPERTY: Final = Kind.PROPERTY
_RAILROAD: Final = Kind.RAILROAD
_UTILITY: Final = Kind.UTILITY
_TAX: Final = Kind.TAX
_CHANCE: Final = Kind.CHANCE
_CASINO: Final = Kind.CASINO
_GO_TO_JAIL: Final = Kind.GO_TO_JAIL
_CHEST: Final = Kind.CHEST
UTILITY_THROW: Final = Effect.NEAREST_UTILITY_THROW
_RENT: Final = PaymentReason.RENT
_SALARY: Final = BankPaidReason.SALARY
#: Auctions that start at the printed price whatever the rule set (M3, X3); others follow A1/A2.
PRICE_START: Final = frozenset({AuctionReason.MORTGAGE_EXPIRED, AuctionReason.OWNER_SALE})
#: P10: building auctions, by the level kind they sell (1 a house, 5 a hotel).
BUILDING_AUCTIONS: Final = {AuctionReason.HOUSE: 1, AuctionReason.HOTEL: 5}
#: The phases in which the actor may sell, mortgage or surrender (P8, M1, D1).
MANAGE: Final = frozenset({Phase.PRE_ROLL, Phase.BUY, Phase.PAYMENT, Phase.POST_ROLL})
#: The phases in which the actor may lift a mortgage (M2) or put one to auction (X3).
LIFT: Final = frozenset({Phase.PRE_ROLL, Phase.BUY, Phase.POST_ROLL})
#: X3: the phases of one's own turn in which a mortgaged property of one's own may go to auction.
OWNER_SALE: Final = frozenset({Phase.PRE_ROLL, Phase.POST_ROLL})
#: T1: the phases in which the player whose turn it is may propose a trade.
TRADE_WINDOWS: Final = frozenset({Phase.PRE_ROLL, Phase.BUY, Phase.PAYMENT})
ONLY_PRE_ROLL: Final = frozenset({Phase.PRE_ROLL})
ONLY_BUY: Final = frozenset({Phase.BUY})
ONLY_PAYMENT: Final = frozenset({Phase.PAYMENT})
ONLY_AUCTION: Final = frozenset({Phase.AUCTION})
ONLY_CASINO: Final = frozenset({Phase.CASINO})
ONLY_TRADE: Final = frozenset({Phase.TRADE})
ONLY_POST_ROLL: Final = frozenset({Phase.POST_ROLL})
ONLY_CHOICE: Final = frozenset({Phase.CHOICE})
ROLL_DONE: Final = frozenset({Phase.PRE_ROLL, Phase.POST_ROLL})


class Ctx:
    """Collects the events of one command, applying each as it is emitted."""

    __slots__ = ("events", "state")

    def __init__(self, state: TableState) -> None:
        self.state = state
        self.events: list[Event] = []

    def emit(self, event: Event) -> None:
        state = self.state
        event._evolve(state, event)  # set on every event class by the facade (game.py)
        state.seq += 1
        self.events.append(event)


class Steps:
    """The steps of the flow that a rule area above supplies; game.py sets each one once."""

    #: C1-C4 (decks): draw from `deck` ("chance" or "chest") and carry the card out.
    draw_card: Callable[[Ctx, int, str], None]
    #: M3 (mortgages): the current player's first expired mortgage goes to auction.
    expire_mortgages: Callable[[Ctx], None]
    #: M4 (mortgages): the receiver of a mortgaged square owes the fee (or lifts at once).
    mortgage_fee: Callable[[Ctx, int, int], None]
    #: E5 (clock): pause once every active player agreed.
    pause_if_agreed: Callable[[Ctx], None]
    #: E5 (clock): schedule the resume once every active player confirmed being back.
    resume_if_back: Callable[[Ctx], None]


STEPS: Final = Steps()

#: Each rule area's tables, which the facade merges: a command type's check (raises
#: RuleViolation, changes nothing) and effect (emits the events), and an event type's applier.
CheckFn = Callable[[TableState, Any], None]
EffectFn = Callable[[Ctx, Any], None]
ApplyFn = Callable[[TableState, Any], None]


# -- shared checks -------------------------------------------------------------------


def actor(
    state: TableState, seat: int, phases: frozenset[Phase], rule: str = "G2", turn_rule: str | None = None
) -> None:
    """Refuse a command from anyone but the seat the game waits for, or in another phase.

    `rule` names the rule of the phase; `turn_rule` (default: `rule`) the rule broken by a seat
    that is not the one to act, when that is the turn rule (G2) rather than the command's own.
    """
    if state.paused:
        raise RuleViolation("E5", "the game is paused: confirm you are back")
    if seat != state.actor or type(seat) is not int:
        if state.finished:
            raise RuleViolation("D5", "the game is over")
        if type(seat) is not int or not 0 <= seat < len(state.players):
            raise RuleViolation("G1", f"there is no seat {seat!r}")
        raise RuleViolation(turn_rule or rule, f"seat {state.actor} must act now, not seat {seat}")
    if state.phase not in phases:
        raise RuleViolation(rule, f"not allowed in the {state.phase} phase")


def any_time(state: TableState, seat: int) -> None:
    """P10, G9 (hasbro, `manage_any_time`): any active player may build, sell, mortgage and lift
    at any time; callers check the switch first and otherwise require the actor (`actor`)."""
    if state.paused:
        raise RuleViolation("E5", "the game is paused: confirm you are back")
    active(state, seat)


def active(state: TableState, seat: int) -> None:
    if state.finished:
        raise RuleViolation("D5", "the game is over")
    if type(seat) is not int or not 0 <= seat < len(state.players) or state.players[seat].bankrupt:
        raise RuleViolation("G1", f"seat {seat!r} is not an active player")


def property_of(state: TableState, seat: int, square: object, rule: str) -> None:
    """Refuse unless `square` is a property `seat` owns (B1 for a square off the board). `square` as
    the command holds it, read untyped (`getattr`): compiled, a typed read of a non-int raises TypeError."""
    if type(square) is not int or not 0 <= square < 40:
        raise RuleViolation("B1", f"there is no square {square!r}")
    if not state.config.board.squares[square].purchasable:
        raise RuleViolation(rule, f"square {square} is not a property")
    if state.owner[square] != seat:
        raise RuleViolation(rule, f"{state.config.board.squares[square].name} is not yours")


# -- shared queries --------------------------------------------------------------------


def owned(state: TableState, seat: int) -> list[int]:
    return [sq for sq in state.config.board.purchasable if state.owner[sq] == seat]


def others(state: TableState, seat: int) -> list[int]:
    """The other active players in turn order, starting after `seat`."""
    order = state.active_seats
    i = order.index(seat)
    return order[i + 1 :] + order[:i]


def nearest(state: TableState, start: int, kind: Kind) -> int:
    squares = state.config.board.squares
    for step in range(1, 41):
        sq = (start + step) % 40
        if squares[sq].kind is kind:
            return sq
    raise ValueError(f"no {kind} square on the board")


def deck_ids(cfg: TableConfig) -> tuple[int, ...]:
    return tuple(card.id for card in cfg.chance_deck)


def teammates(state: TableState, a: int, b: int) -> bool:
    """X4: seats 0 and 2 play against 1 and 3. A seat that is not a number (a malformed trade, which
    T2 then refuses) is nobody's teammate."""
    return state.config.teams and a != b and type(a) is int and type(b) is int and a % 2 == b % 2


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
    if card is not None and card.effect is UTILITY_THROW:  # C1: ten times the card's own throw
        return state.throw * multiplier
    return sum(state.dice) * multiplier


def game_decided(state: TableState) -> bool:
    """D5: one player left, or (X4) one team."""
    active = state.active_seats
    if state.config.teams:
        return len({s % 2 for s in active}) <= 1
    return len(active) <= 1


def raisable_for_bid(state: TableState, seat: int, mortgage_value: int) -> int:
    """A3: the most `seat` could pay for the auctioned square (what the table's bid limit allows)."""
    owed = sum(p.amount for p in state.payments if p.debtor == seat)
    return max(state.players[seat].cash - owed, state.raisable(seat) - owed + mortgage_value)


# -- shared steps ------------------------------------------------------------------------


def move(ctx: Ctx, seat: int, steps: int) -> None:
    """Move forward, paying the salary when passing or landing on start (G5, G6)."""
    state = ctx.state
    start = state.players[seat].position
    end = (start + steps) % 40
    ctx.emit(Moved(seat, start, end))
    if start + steps >= 40 and salary_paid(state):
        cfg = state.config
        ctx.emit(BankPaid(seat, cfg.salary, _SALARY))
        if end == 0 and cfg.start_bonus:
            ctx.emit(BankPaid(seat, cfg.start_bonus, BankPaidReason.START_BONUS))


def move_to(ctx: Ctx, seat: int, target: int) -> None:
    steps = (target - ctx.state.players[seat].position) % 40
    move(ctx, seat, steps or 40)


def _auctioned_by_the_bank(state: TableState, square: int) -> bool:
    """D4: a square a bankruptcy returned is the bank's to auction (now, or once the running auction
    ends), not a purchase for whoever lands on it meanwhile."""
    auction = state.auction
    if auction is not None and auction.square == square and auction.reason not in BUILDING_AUCTIONS:
        return True
    return square in state.auction_queue


def land(ctx: Ctx, seat: int, card: Card | None = None) -> None:
    """Resolve the square the player's token rests on (P1, P2, taxes, C4, K1, G7)."""
    state = ctx.state
    pos = state.players[seat].position
    square = state.config.board.squares[pos]
    kind = square.kind
    if kind is _PROPERTY or kind is _RAILROAD or kind is _UTILITY:
        owner = state.owner[pos]
        if owner == BANK:
            if not _auctioned_by_the_bank(state, pos):
                ctx.emit(PurchaseOffered(seat, pos, square.price))
        elif (
            owner != seat
            and state.mortgaged_round[pos] < 0
            and (state.config.rent_while_jailed or not state.players[owner].in_jail)
            and not teammates(state, seat, owner)
        ):
            if card is not None and card.effect is UTILITY_THROW:  # C1: throw the dice for this rent
                ctx.emit(
                    DiceThrown(
                        seat, rng.die(state.rng_seed, state.rng_counter), rng.die(state.rng_seed, state.rng_counter + 1)
                    )
                )
            due = rent(state, pos, card)
            if state.config.rent_claims:  # H2: due only if the owner claims it in time
                ctx.emit(RentClaimable(seat, owner, pos, due))
                return
            charge(ctx, seat, owner, due, _RENT, pos, bank_share=due * rent_tax_percent(state) // 100)
    elif kind is _TAX:
        charge(ctx, seat, BANK, square.tax, PaymentReason.TAX, pos)
    elif kind is _CHANCE:
        STEPS.draw_card(ctx, seat, "chance")
    elif kind is _CASINO:
        if state.config.casino.enabled:
            if "casino" in state.config.external:  # what the casino service needs to take the bet
                deadline = state.clock if state.timed_out else state.turn_deadline
                ctx.emit(casino.CasinoOpened(seat, state.players[seat].cash, deadline))
            else:
                ctx.emit(casino.CasinoOpened(seat))
    elif kind is _GO_TO_JAIL:
        ctx.emit(SentToJail(seat, JailReason.GO_TO_JAIL))
        end_turn(ctx)
    elif kind is _CHEST:
        STEPS.draw_card(ctx, seat, "chest")


def charge(
    ctx: Ctx,
    debtor: int,
    creditor: int,
    amount: int,
    reason: PaymentReason,
    square: int,
    then_move: bool = False,
    bank_share: int = 0,
) -> None:
    """A mandatory payment: pending until paid (D1), or bankruptcy if it cannot be raised (D2).
    `square` is where it arose (PaymentDue.square)."""
    if amount <= 0:
        return
    state = ctx.state
    owed = amount + sum(p.amount for p in state.payments if p.debtor == debtor) if state.payments else amount
    if state.players[debtor].cash < owed and state.raisable(debtor) < owed:
        bankrupt(ctx, debtor, creditor)
        return
    ctx.emit(PaymentDue(debtor, creditor, amount, reason, then_move, bank_share, square))


def start_auction(
    ctx: Ctx,
    square: int,
    reason: AuctionReason,
    after: int,
    excluded: int,
    seller: int = BANK,
    among: tuple[int, ...] = (),
) -> None:
    """A1, A2: the bidders in seat order from the one after `after`; no bidder, no sale."""
    state = ctx.state
    order = state.active_seats
    i = order.index(after) if after in order else -1
    rotated = order[i + 1 :] + order[: i + 1]
    bidders = tuple(s for s in rotated if s != excluded and (not among or s in among))
    auction_id = state.next_auction_id
    if not bidders:
        settled = auctions.AuctionSettled(auction_id, square, BANK, 0)
        ctx.emit(settled)
        after_auction(ctx, settled, reason)
        return
    rules = state.config.auction
    price = state.config.board.squares[square].price
    start = price if rules.start_at_price or reason in PRICE_START else rules.min_first_bid
    limits: tuple[int, ...] = ()
    bid_ms = 0
    if "auction" in state.config.external:  # what the auction service needs to run it alone
        limits = bid_limits(state, square, reason, bidders)
        bid_ms = state.config.clock.bid_seconds * 1000
    bid_rule = "" if rules.rule == "A1" else rules.rule  # A1: the field's empty default
    ctx.emit(
        auctions.AuctionStarted(
            auction_id, square, reason, bidders, start, rules.increment, seller, limits, bid_ms, bid_rule
        )
    )


def bid_limits(state: TableState, square: int, reason: AuctionReason, bidders: Sequence[int]) -> tuple[int, ...]:
    """A3: per bidder, the most they could pay for what the auction sells (an auction service's limits)."""
    mortgage_value = 0 if reason in BUILDING_AUCTIONS else state.config.board.squares[square].mortgage_value
    players = state.players
    return tuple(0 if players[seat].bankrupt else raisable_for_bid(state, seat, mortgage_value) for seat in bidders)


def refresh_auction_limits(ctx: Ctx) -> None:
    """A3 (external auctions): after a command that changed what a bidder could pay while the auction
    service runs the auction (hasbro trades, builds and mortgages go on meanwhile), tell it the new limits."""
    auction = ctx.state.auction
    if auction is None or not auction.limits or ctx.state.finished:
        return
    limits = bid_limits(ctx.state, auction.square, auction.reason, auction.bidders)
    if limits != auction.limits:
        ctx.emit(auctions.AuctionLimitsChanged(auction.auction_id, limits))


def after_auction(
    ctx: Ctx,
    settled: auctions.AuctionSettled,
    reason: AuctionReason,
    seller: int = BANK,
    returned: bool = True,
    expiry_after: bool = False,
) -> None:
    """A3: the winning bid is a mandatory payment; then the next M3 or D4 auction, if any, or the M3
    expiry the turn's start put off while this auction ran (`expiry_after`: the auction's own flag)."""
    if settled.winner != BANK:
        if seller != BANK:  # X3: the seller gets the price less the lifting cost
            cfg = ctx.state.config
            lift = cfg.lift_cost(cfg.board.squares[settled.square].price)
            charge(
                ctx,
                settled.winner,
                seller,
                settled.price,
                PaymentReason.AUCTION,
                settled.square,
                bank_share=min(lift, settled.price),
            )
        else:
            charge(ctx, settled.winner, BANK, settled.price, PaymentReason.AUCTION, settled.square)  # A3
    if reason == AuctionReason.MORTGAGE_EXPIRED or expiry_after:  # M3: the next expired mortgage, or the
        STEPS.expire_mortgages(ctx)  # check of a turn that started while this auction ran (its player left, R3)
    if returned:  # D4: properties a bankruptcy returned while this auction ran wait for its end
        auction_returned(ctx)  # (`bankrupt` calls it itself, after the turn it may end)


def auction_returned(ctx: Ctx) -> None:
    """D4 (hasbro): the next property a bankruptcy returned to the bank goes to auction, every
    active player bidding from the minimum, starting after the current player."""
    state = ctx.state
    if state.auction is not None or state.finished or not state.auction_queue or state.paused:
        return  # E5: a pause puts it off to the resume (clock.auctions_put_off)
    start_auction(ctx, state.auction_queue[0], AuctionReason.BANKRUPT, after=state.current, excluded=BANK)


def bankrupt(ctx: Ctx, seat: int, creditor: int, cause: BankruptCause = BankruptCause.DEBT) -> None:
    """D2-D5: out of the game; the last player (Team 2v2: team) left wins."""
    state = ctx.state
    was_current = seat == state.current
    cfg = state.config
    received: tuple[int, ...] = ()
    if creditor != BANK and cfg.mortgage_transfer_fee_percent is not None:  # M4 follows D3
        received = tuple(sq for sq in owned(state, seat) if state.mortgaged_round[sq] >= 0)
    cards = state.players[seat].jail_cards
    if cards and not (creditor != BANK and cfg.jail_cards_to_creditor):  # D3, D4: back to their decks
        reshuffle_before_returning(ctx, cards)
    ctx.emit(PlayerBankrupt(seat, creditor, len(state.active_seats), cause))
    limit = cfg.end_after_bankruptcies
    if limit is not None and len(state.eliminated) >= limit and not game_decided(state):
        end_by_worth(ctx, EndReason.SHORT_GAME)  # H3, H4: the short game ends here, by worth (H6)
        return
    for sq in received:
        if state.owner[sq] == creditor and state.mortgaged_round[sq] >= 0 and not game_decided(state):
            STEPS.mortgage_fee(ctx, creditor, sq)
    if state.finished:  # M4: a fee bankrupted the creditor too, and that bankruptcy ended the game
        return
    active = state.active_seats
    auction = state.auction
    if auction is not None and not game_decided(state):
        if auction.seller == seat:  # X3: the seller's bankruptcy calls the sale off; the square went with the rest
            settled: auctions.AuctionSettled | None = auctions.AuctionSettled(
                auction.auction_id, auction.square, BANK, 0
            )
        else:  # a bankrupt bidder left the auction
            settled = auctions.result_if_closed(auction)
        if settled is not None:
            ctx.emit(settled)
            after_auction(
                ctx, settled, auction.reason, auction.seller, returned=False, expiry_after=auction.expiry_after
            )
    if state.vote_deadline >= 0 and not game_decided(state):
        STEPS.pause_if_agreed(ctx)  # E5: the one who had not answered has left
    if state.paused and state.resume_at < 0 and not game_decided(state):
        STEPS.resume_if_back(ctx)  # E5: the one who had not confirmed has left (R3)
    if game_decided(state):
        if state.config.teams:  # X4: the last team standing wins; the team places are 1 and 2
            team = active[0] % 2
            places = tuple(1 if p.seat % 2 == team else 2 for p in state.players)
            ctx.emit(GameEnded(active[0], places, EndReason.LAST_TEAM, state.game_ms, state.config.clock.scale))
        else:
            places = tuple(p.place if p.bankrupt else 1 for p in state.players)
            ctx.emit(GameEnded(active[0], places, EndReason.LAST_PLAYER, state.game_ms, state.config.clock.scale))
    elif was_current:
        end_turn(ctx)
    if state.auction_queue and not state.finished:  # D4
        auction_returned(ctx)


def end_turn(ctx: Ctx) -> None:
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
        end_by_worth(ctx, EndReason.ROUND_CAP)
        return
    limit = state.config.time_limit_minutes
    if limit is not None and state.game_ms >= limit * 60_000:  # H5: the agreed end time has come
        end_by_worth(ctx, EndReason.TIME_LIMIT)
        return
    ctx.emit(TurnStarted(order[nxt % n], new_round))
    STEPS.expire_mortgages(ctx)


def end_by_worth(ctx: Ctx, reason: EndReason) -> None:
    """H6: the game ends now; places by net worth (ties: turn order). X4: by team, as at a team's
    last-standing win: the team whose players still in the game are worth more is 1st, the other 2nd,
    and the winner is that team's richest player."""
    state = ctx.state
    active = state.active_seats
    ranked = sorted(active, key=lambda s: (-state.net_worth(s), active.index(s)))
    if state.config.teams:
        worth = [0, 0]
        for seat in active:
            worth[seat % 2] += state.net_worth(seat)
        first_at = {seat % 2: i for i, seat in reversed(list(enumerate(active)))}  # ties: turn order
        first_team = min(first_at, key=lambda team: (-worth[team], first_at[team]))
        team_places = tuple(1 if p.seat % 2 == first_team else 2 for p in state.players)
        winner = next(s for s in ranked if s % 2 == first_team)
        ctx.emit(GameEnded(winner, team_places, reason, state.game_ms, state.config.clock.scale))
        return
    places = [p.place for p in state.players]
    for place, seat in enumerate(ranked, start=1):
        places[seat] = place
    ctx.emit(GameEnded(ranked[0], tuple(places), reason, state.game_ms, state.config.clock.scale))


# -- shared parts of the event appliers ---------------------------------------------------


def demolition_targets(state: TableState, seat: int) -> list[int]:
    """C4 (Duel): opponents' squares with a building."""
    return [
        sq
        for sq in state.config.board.purchasable
        if state.buildings[sq] and state.owner[sq] != seat and not teammates(state, seat, state.owner[sq])
    ]


def timer_start(s: TableState) -> int:
    """When a timer set now starts: the clock, or while paused the pause's start. E5 freezes every
    timer and the resume adds the whole pause to every deadline, so a timer set during a pause (a
    player left meanwhile, R3) gets its full length from the resume, not the pause on top."""
    return s.paused_at if s.paused else s.clock


def start_payment_timer(s: TableState) -> None:
    """D1, E1: a debt (too little cash) or another player's payment gets the debt timer;
    the current player's affordable payment runs on the turn timer."""
    due = s.payments[0]
    if due.debtor != s.current or s.players[due.debtor].cash < due.amount:
        due.deadline = timer_start(s) + s.config.clock.debt_seconds * 1000


def restart_turn_timer(s: TableState) -> None:
    """Decision: the turn timer starts again when play comes back from other players' decisions."""
    s.turn_deadline = timer_start(s) + s.config.clock.turn_seconds * 1000


def restart_bid_timer(s: TableState) -> None:
    """A1, E1: the bidder to act has their 20 s from now."""
    s.bid_deadline = timer_start(s) + s.config.clock.bid_seconds * 1000


def return_card(s: TableState, card_id: int) -> None:
    """C3: a Get Out of Jail Free card goes back to the bottom of its own deck."""
    (s.chest if card_id >= CHEST_BASE else s.deck).append(card_id)


def reshuffle_if_empty(ctx: Ctx, deck: str) -> None:
    """C4: a pile that ran out is reshuffled from every card of its deck but the kept jail cards.

    Called before a draw, and before a kept card goes back to its pile (`return_card`): a card
    returned to an empty pile would otherwise be the whole pile, drawn next for certain, and the
    discards never reshuffled in. Hasbro's piles never run out (C3: drawn cards go to the bottom)."""
    state = ctx.state
    chance = deck == "chance"
    if state.deck if chance else state.chest:
        return
    cfg = state.config
    held = {c for p in state.players for c in p.jail_cards}
    ids = deck_ids(cfg) if chance else tuple(card.id for card in cfg.chest_deck)
    pile = tuple(c for c in ids if c not in held)
    if pile:
        ctx.emit(DeckShuffled(deck, rng.shuffled(pile, state.rng_seed, state.rng_counter)))


def reshuffle_before_returning(ctx: Ctx, cards: Sequence[int]) -> None:
    """C4: the piles the kept `cards` are about to go back to, reshuffled first if they ran out."""
    for deck in sorted({"chest" if c >= CHEST_BASE else "chance" for c in cards}):
        reshuffle_if_empty(ctx, deck)


def nothing(s: TableState, e: Event) -> None:
    """An event that records what happened; its effects come as the events after it."""
