"""The table state: everything needed to continue a game, and nothing derived.

The phase and the player who must act are computed from what is pending
(a trade, payments, an auction, a casino bet, a purchase offer), so they can
never disagree with it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Final

from .config import TableConfig
from .reasons import AuctionReason, PaymentReason

BANK: Final = -1  # creditor / owner "the bank"


class Phase(StrEnum):
    PRE_ROLL = "pre_roll"  # G2: before rolling (also between rolls after doubles)
    BUY = "buy"  # P1: deciding a purchase
    AUCTION = "auction"  # A1: bidding
    PAYMENT = "payment"  # D1: a mandatory payment is pending
    CASINO = "casino"  # K1: bet or decline
    CHOICE = "choice"  # X6 bus or triple, C4 demolition: the player chooses
    TRADE = "trade"  # T2: the other side accepts or declines
    POST_ROLL = "post_roll"  # G2: optional actions, then end turn
    PAUSED = "paused"  # E5: only ConfirmBack (and the clock) until play resumes
    GAME_OVER = "game_over"  # D5


# Module-level aliases of the members `phase` returns: an enum member lookup costs ten global
# lookups on Python 3.11, and `Final` makes them C constants in the native build.
_GAME_OVER: Final = Phase.GAME_OVER
_PAUSED: Final = Phase.PAUSED
_TRADE: Final = Phase.TRADE
_PAYMENT: Final = Phase.PAYMENT
_AUCTION: Final = Phase.AUCTION
_CHOICE: Final = Phase.CHOICE
_CASINO: Final = Phase.CASINO
_BUY: Final = Phase.BUY
_PRE_ROLL: Final = Phase.PRE_ROLL
_POST_ROLL: Final = Phase.POST_ROLL


@dataclass(slots=True)
class PlayerState:
    seat: int
    name: str
    cash: int
    position: int = 0
    in_jail: bool = False
    jail_turns: int = 0  # J4: failed rolls so far in this stay
    jail_cards: list[int] = field(default_factory=list)  # ids of kept Get Out of Jail Free cards
    bankrupt: bool = False
    place: int = 0  # D5: final place, 0 while playing

    def copy(self) -> PlayerState:
        return PlayerState(
            self.seat,
            self.name,
            self.cash,
            self.position,
            self.in_jail,
            self.jail_turns,
            list(self.jail_cards),
            self.bankrupt,
            self.place,
        )


@dataclass(slots=True, init=False)
class Payment:
    """A mandatory payment waiting for the debtor's `Pay` (D1). A value: never changed once made.

    Its own `__init__`, made at every payment: compiled to a direct constructor (see `Event`)."""

    debtor: int
    creditor: int  # seat, or BANK
    amount: int
    reason: PaymentReason
    #: J4: after this payment the debtor moves by the dice of the roll.
    then_move: bool = False
    #: The part that goes to the bank instead of the creditor (E4, X3).
    bank_share: int = 0
    #: D1, E1: game ms by which a debt must be settled; -1: the payment runs on the turn timer.
    deadline: int = -1
    #: The square the payment arose on (PaymentDue.square); M4: lifting the mortgage of a
    #: "mortgage_fee" payment's square instead cancels the fee.
    square: int = -1

    def __init__(
        self,
        debtor: int,
        creditor: int,
        amount: int,
        reason: PaymentReason,
        then_move: bool = False,
        bank_share: int = 0,
        deadline: int = -1,
        square: int = -1,
    ) -> None:
        self.debtor = debtor
        self.creditor = creditor
        self.amount = amount
        self.reason = reason
        self.then_move = then_move
        self.bank_share = bank_share
        self.deadline = deadline
        self.square = square

    def copy(self) -> Payment:
        return Payment(
            self.debtor,
            self.creditor,
            self.amount,
            self.reason,
            self.then_move,
            self.bank_share,
            self.deadline,
            self.square,
        )


@dataclass(slots=True)
class AuctionState:
    """A running auction (A1-A3); the pure auction module owns its transitions."""

    auction_id: int
    square: int
    reason: AuctionReason
    bidders: list[int]  # seats in bidding order
    out: list[bool]  # passed, per bidder index
    turn: int  # index into bidders of who bids now
    start_price: int
    increment: int
    seller: int = BANK
    high_bid: int = 0
    high_bidder: int = BANK
    #: The rule ID a refused bid names: A1 (online) or A2 (hasbro), from `AuctionStarted.bid_rule`.
    bid_rule: str = "A1"
    #: External auctions (A3): per bidder, the most they could pay as last told to the auction
    #: service (`AuctionStarted.limits`, then `AuctionLimitsChanged`); empty at a table's own auction.
    limits: tuple[int, ...] = ()
    #: M3: a turn began while this auction ran, so its mortgage expiry waits for the auction's end.
    expiry_after: bool = False

    def copy(self) -> AuctionState:
        return replace(self, bidders=list(self.bidders), out=list(self.out))

    @property
    def bidder(self) -> int:
        return self.bidders[self.turn]

    @property
    def min_bid(self) -> int:
        return self.start_price if self.high_bidder == BANK else self.high_bid + self.increment


@dataclass(frozen=True, slots=True)
class TradeOffer:
    """T2: cash and properties from each side; `give_*` leave the proposer."""

    trade_id: int
    proposer: int
    counterparty: int
    give_cash: int
    give_squares: tuple[int, ...]
    take_cash: int
    take_squares: tuple[int, ...]
    #: T2 (hasbro): Get Out of Jail Free cards (their ids) on each side.
    give_cards: tuple[int, ...] = ()
    take_cards: tuple[int, ...] = ()


@dataclass(slots=True)
class TableState:
    config: TableConfig
    seed: int
    rng_seed: int
    rng_counter: int
    players: list[PlayerState]
    order: list[int]  # G1: seats in turn order
    owner: list[int]  # per square: seat or BANK
    buildings: list[int]  # per square: 0..4 houses, 5 = hotel
    mortgaged_round: list[int]  # per square: round it was mortgaged in, -1 if not mortgaged
    deck: list[int]  # chance draw pile, top first
    current: int = -1  # seat whose turn it is
    round: int = 0
    turn_no: int = 0
    rolled: bool = False
    roll_again: bool = False  # G3
    doubles: int = 0  # G4: doubles rolled this turn
    dice: tuple[int, int] = (0, 0)
    builds: list[int] = field(default_factory=list)  # P9: groups built in this turn
    proposals: int = 0  # T1: proposals this turn
    offer: int = -1  # P1: square offered for purchase
    payments: list[Payment] = field(default_factory=list)
    auction: AuctionState | None = None
    casino: bool = False  # K1: a bet is open for the current player
    trade: TradeOffer | None = None
    next_auction_id: int = 1
    next_trade_id: int = 1
    jackpot: int = 0  # K4
    bank_in: int = 0  # money paid to the bank so far
    bank_out: int = 0  # money paid by the bank so far
    seq: int = 0  # events applied
    eliminated: list[int] = field(default_factory=list)  # D5: seats in order of elimination
    winner: int = -1
    finished: bool = False
    end_reason: str = ""
    # -- the clock (E1-E6): game milliseconds since the table was created ----------
    clock: int = 0
    turn_deadline: int = 0
    bid_deadline: int = 0
    missed: list[int] = field(default_factory=list)  # E2: timed-out turns in a row, per seat
    timed_out: bool = False  # E2: this turn ran out of time; the game plays it by default
    pause_votes: list[int] = field(default_factory=list)  # E5: seats that said yes
    vote_deadline: int = -1  # E5: -1 when no vote is open
    paused: bool = False
    paused_at: int = 0
    paused_total: int = 0  # pauses so far, in ms (game minutes exclude them)
    back: list[int] = field(default_factory=list)  # E5: seats that confirmed they are back
    resume_at: int = -1  # E5: end of the resume countdown, -1 when none
    #: M3: the turn's mortgage expiry waits for the resume (E5): the turn began while paused, or an
    #: auction ended while paused that was an M3 one or had a turn's check waiting for it
    #: (`AuctionState.expiry_after`). Only then does a resume look for expired mortgages.
    expiry_at_resume: bool = False
    # -- the speed die and other choices (X6, C4 Duel) ------------------------------
    choice: str = ""  # "bus" | "triple" | "demolish" while the player chooses
    speed: int = 0  # the speed die of the last roll
    mr_monopoly: bool = False  # X6: the Mr. Monopoly move is still to come this roll
    # -- the hasbro rule set ------------------------------------------------------------
    chest: list[int] = field(default_factory=list)  # C2: Community Chest draw pile, top first
    throw: int = 0  # C1: the dice sum of the nearest-utility card's own throw
    auction_queue: list[int] = field(default_factory=list)  # D4: returned squares still to auction
    #: P10: buildings won at a building auction and not yet placed, as (seat, level kind) pairs:
    #: kind 1 a house, 5 a hotel.
    won_buildings: list[tuple[int, int]] = field(default_factory=list)
    #: H2: the rents their owners may still claim, four numbers each, in the order they arose:
    #: (payer, owner, square, amount, payer, owner, ...); empty when none.
    claim: tuple[int, ...] = ()

    # -- derived -----------------------------------------------------------
    @property
    def phase(self) -> Phase:
        if self.finished:
            return _GAME_OVER
        if self.paused:
            return _PAUSED
        if self.trade is not None:
            return _TRADE
        if self.payments:
            return _PAYMENT
        if self.auction is not None:
            return _AUCTION
        if self.choice:
            return _CHOICE
        if self.casino:
            return _CASINO
        if self.offer >= 0:
            return _BUY
        if not self.rolled or self.roll_again:
            return _PRE_ROLL
        return _POST_ROLL

    @property
    def actor(self) -> int:
        """The seat whose decision the game waits for (-1 when the game is over)."""
        if self.finished:
            return -1
        if self.trade is not None:
            return self.trade.counterparty
        if self.payments:
            return self.payments[0].debtor
        auction = self.auction
        if auction is not None:
            return auction.bidders[auction.turn]
        return self.current

    @property
    def active_seats(self) -> list[int]:
        """Seats still playing, in turn order."""
        players = self.players
        return [s for s in self.order if not players[s].bankrupt]

    def owns_group(self, seat: int, group: int) -> bool:
        owner = self.owner
        for sq in self.config.board.members[group]:
            if owner[sq] != seat:
                return False
        return True

    def group_has_buildings(self, group: int) -> bool:
        buildings = self.buildings
        for sq in self.config.board.members[group]:
            if buildings[sq]:
                return True
        return False

    def raisable(self, seat: int) -> int:
        """D2: cash plus everything selling buildings and mortgaging could raise."""
        cfg = self.config
        hotel = cfg.hotel_after_houses + 1  # a hotel is bought with this many building costs (P7, H3)
        total = self.players[seat].cash
        for sq in cfg.board.purchasable:
            if self.owner[sq] != seat:
                continue
            square = cfg.board.squares[sq]
            level = self.buildings[sq]
            total += (hotel if level == 5 else level) * cfg.sale_value(square.house_cost)
            if self.mortgaged_round[sq] < 0:
                total += square.mortgage_value
        return total

    def net_worth(self, seat: int) -> int:
        """H6 valuation: cash + price (mortgaged: half) + buildings at cost, each pending payment
        counted as made (a square won at auction and not yet paid for is not worth its price on top)."""
        squares = self.config.board.squares
        hotel = self.config.hotel_after_houses + 1
        total = self.players[seat].cash
        for p in self.payments:
            if p.debtor == seat:
                total -= p.amount
            elif p.creditor == seat:
                total += p.amount - p.bank_share
        for sq in self.config.board.purchasable:
            if self.owner[sq] == seat:
                s = squares[sq]
                total += s.price // 2 if self.mortgaged_round[sq] >= 0 else s.price
                level = self.buildings[sq]
                total += (hotel if level == 5 else level) * s.house_cost
        return total

    def bank_houses(self) -> int:
        """P10: houses the bank still holds (a large number when the supply is unlimited)."""
        supply = self.config.house_supply
        if supply is None:
            return 1 << 30
        buildings = self.buildings
        hotels = buildings.count(5)
        won = sum(1 for _, kind in self.won_buildings if kind == 1)
        return supply - (sum(buildings) - 5 * hotels) - won

    def bank_hotels(self) -> int:
        """P10: hotels the bank still holds."""
        supply = self.config.hotel_supply
        if supply is None:
            return 1 << 30
        won = sum(1 for _, kind in self.won_buildings if kind == 5)
        return supply - self.buildings.count(5) - won

    def copy(self) -> TableState:
        """An independent copy (the config and other frozen values are shared).

        Every field by name: the table service decides each command on a copy, and this is about
        four times quicker than `dataclasses.replace` and a walk over the fields. A field added to
        the class must be added here (tests/unit/engine/test_state.py checks that none is missed)."""
        auction = self.auction
        return TableState(
            config=self.config,
            seed=self.seed,
            rng_seed=self.rng_seed,
            rng_counter=self.rng_counter,
            players=[p.copy() for p in self.players],
            order=list(self.order),
            owner=list(self.owner),
            buildings=list(self.buildings),
            mortgaged_round=list(self.mortgaged_round),
            deck=list(self.deck),
            current=self.current,
            round=self.round,
            turn_no=self.turn_no,
            rolled=self.rolled,
            roll_again=self.roll_again,
            doubles=self.doubles,
            dice=self.dice,
            builds=list(self.builds),
            proposals=self.proposals,
            offer=self.offer,
            payments=[p.copy() for p in self.payments],
            auction=auction.copy() if auction is not None else None,
            casino=self.casino,
            trade=self.trade,
            next_auction_id=self.next_auction_id,
            next_trade_id=self.next_trade_id,
            jackpot=self.jackpot,
            bank_in=self.bank_in,
            bank_out=self.bank_out,
            seq=self.seq,
            eliminated=list(self.eliminated),
            winner=self.winner,
            finished=self.finished,
            end_reason=self.end_reason,
            clock=self.clock,
            turn_deadline=self.turn_deadline,
            bid_deadline=self.bid_deadline,
            missed=list(self.missed),
            timed_out=self.timed_out,
            pause_votes=list(self.pause_votes),
            vote_deadline=self.vote_deadline,
            paused=self.paused,
            paused_at=self.paused_at,
            paused_total=self.paused_total,
            back=list(self.back),
            resume_at=self.resume_at,
            expiry_at_resume=self.expiry_at_resume,
            choice=self.choice,
            speed=self.speed,
            mr_monopoly=self.mr_monopoly,
            chest=list(self.chest),
            throw=self.throw,
            auction_queue=list(self.auction_queue),
            won_buildings=list(self.won_buildings),
            claim=self.claim,
        )

    @property
    def game_ms(self) -> int:
        """E3, E4: game time played, pauses excluded."""
        paused_now = self.clock - self.paused_at if self.paused else 0
        return self.clock - self.paused_total - paused_now

    @property
    def minute(self) -> int:
        """The game minute, counted from 1 like a match clock (minute 61 starts at 60:00)."""
        return self.game_ms // 60_000 + 1
