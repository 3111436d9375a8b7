"""A bot that plays sensibly and fast: the default opponent of simulations.

It buys while it keeps a cash reserve, bids up to a value, builds on its
colour groups, trades to complete groups, and sells and mortgages its way
out of debt before it surrenders. Every choice is checked by the engine's
own rules (`engine.check`) where the bot is not certain, so it never sends
an illegal command.
"""

from __future__ import annotations

import random
from typing import Final

from engine import (
    AcceptTrade,
    Bid,
    Build,
    BuyProperty,
    ChooseBusMove,
    ChooseSquare,
    Command,
    DeclineBet,
    DeclineProperty,
    DeclineTrade,
    Demolish,
    EndTurn,
    Kind,
    LiftMortgage,
    Mortgage,
    PassBid,
    Pay,
    PayJailFine,
    Phase,
    PlaceBet,
    ProposeTrade,
    Roll,
    RuleViolation,
    SellBuilding,
    Surrender,
    TableState,
    UseJailCard,
    check,
)
from engine.board import Board
from engine.config import TableConfig
from engine.state import BANK

# Module-level aliases: an enum member lookup is slow on Python 3.11 and `choose` runs millions of
# times; `Final`, the native build reads them as C constants.
_PRE_ROLL: Final = Phase.PRE_ROLL
_POST_ROLL: Final = Phase.POST_ROLL
_BUY: Final = Phase.BUY
_PAYMENT: Final = Phase.PAYMENT
_AUCTION: Final = Phase.AUCTION
_CASINO: Final = Phase.CASINO
_TRADE: Final = Phase.TRADE
_CHOICE: Final = Phase.CHOICE


#: Jail policies (the simulator's landing statistics): leave at once by card or fine, or wait
#: for doubles until the third failure. None: the bot's own judgement.
JAIL_POLICIES = ("pay", "wait")


class SeatCommands:
    """A seat's commands that carry no choice: roll, end the turn, pay, buy or decline, pass.

    Commands are values, so the bot hands out the same ones again rather than building them at
    each decision: most decisions are one of these, and building a command is a Python call even
    in the native build (the commands stay interpreted classes, see setup.py).
    """

    def __init__(self, seat: int) -> None:
        self.seat = seat
        self.roll = Roll(seat)
        self.end_turn = EndTurn(seat)
        self.pay = Pay(seat)
        self.buy = BuyProperty(seat)
        self.decline = DeclineProperty(seat)
        self.pass_bid = PassBid(seat)
        self.jail_card = UseJailCard(seat)
        self.jail_fine = PayJailFine(seat)
        self.decline_bet = DeclineBet(seat)
        self.surrender = Surrender(seat)


class HeuristicBot:
    def __init__(self, seed: int, reserve: int = 1500, bid_factor_pct: int = 130) -> None:
        self.rng = random.Random(seed)
        #: Cash kept back when buying, building and lifting mortgages, in online dollars; scaled
        #: to the rule set's money by its salary (online $2,000, hasbro $200).
        self.base_reserve = reserve
        self.reserve = reserve
        #: The least spare cash worth building with (online dollars, scaled like the reserve).
        self.build_min = 500
        self._config: TableConfig | None = None
        #: None, "pay" or "wait" (see JAIL_POLICIES).
        self.jail_policy: str | None = None
        #: P10: building auctions asked for in this turn (at most a few, so a turn always ends).
        self._building_asks = (-1, 0)
        #: T6: the last turn in which the bot offered a trade outside its own turn (one a turn).
        self._offered_turn = -1
        #: Bids go up to this percent of the printed price (double for a group-completing square).
        self.bid_factor_pct = bid_factor_pct
        #: Stop building with less than this left on the turn timer (E1).
        self.time_margin_ms = 20_000
        # What the bot knows of the board, worked out again only when ownership changes.
        self._seen_owner: list[int] = []
        self._seen_seat = -1
        self._seen_seq = -1
        self._seen_state: TableState | None = None
        self._seen_board: Board | None = None
        # The rule set's building settings (TableConfig is frozen), read once per rule set.
        self._build_rules: TableConfig | None = None
        self._supply_limited = False
        self._build_board: Board | None = None
        self._group_limit: int | None = None
        self._owned: list[int] = []  # squares the seat owns
        self._full_groups: list[int] = []  # groups the seat owns whole, best first
        self._one_short: list[tuple[int, int]] = []  # (group, the one square the seat lacks)
        self._fixed = SeatCommands(0)  # the commands of the seat last decided for

    def _refresh(self, state: TableState, seat: int) -> None:
        if state.seq == self._seen_seq and seat == self._seen_seat and state is self._seen_state:
            return  # nothing happened since the last look
        self._seen_seq = state.seq
        self._seen_state = state
        owner = state.owner
        if seat == self._seen_seat and owner == self._seen_owner:
            return
        self._seen_owner = list(owner)
        board = state.config.board
        owned = [sq for sq in board.purchasable if owner[sq] == seat]
        # Everything below depends only on the squares `seat` owns (and the board): another
        # seat's purchase or trade changes nothing of it.
        if seat == self._seen_seat and board is self._seen_board and owned == self._owned:
            return
        self._seen_seat = seat
        self._seen_board = board
        self._owned = owned
        squares = board.squares
        counts = [0] * len(board.members)
        for sq in owned:
            counts[squares[sq].group] += 1
        self._full_groups = []
        self._one_short = []
        for group in range(len(board.members) - 1, 0, -1):
            size = len(board.members[group])
            if counts[group] == size:
                self._full_groups.append(group)
            elif counts[group] == size - 1:
                self._one_short.append((group, _only_missing(owner, board.members[group], seat)))

    def configure(self, config: TableConfig) -> None:
        """Money thresholds in the rule set's scale (online: unchanged). The simulator calls it
        once per game; a bot not told is configured at its first roll decision."""
        self._config = config
        self.reserve = self.base_reserve * config.salary // 2000
        self.build_min = 500 * config.salary // 2000

    # -- the decision -----------------------------------------------------------
    def choose(self, state: TableState, seat: int) -> Command:
        if self._fixed.seat != seat:
            self._fixed = SeatCommands(seat)
        phase = state.phase
        if phase is _PRE_ROLL:
            return self._pre_roll(state, seat)
        if phase is _POST_ROLL:
            return (None if self._hurried(state) else self._manage(state, seat)) or self._fixed.end_turn
        if phase is _BUY:
            return self._buy(state, seat)
        if phase is _PAYMENT:
            return self._pay(state, seat)
        if phase is _AUCTION:
            return self._bid(state, seat)
        if phase is _CASINO:
            return self._bet(state, seat)
        if phase is _TRADE:
            return self._answer_trade(state, seat)
        if phase is _CHOICE:
            return self._choose(state, seat)
        raise ValueError(f"nothing to decide in phase {phase}")

    def _pre_roll(self, state: TableState, seat: int) -> Command:
        if state.config is not self._config:
            self.configure(state.config)
        player = state.players[seat]
        if self.jail_policy is not None and player.in_jail and not state.rolled:
            if self.jail_policy == "pay":
                if player.jail_cards:
                    return self._fixed.jail_card
                if player.cash >= state.config.jail_fine:
                    return self._fixed.jail_fine
                return self._raise_cash(state, seat) or self._fixed.roll  # sell or mortgage to pay
            return self._fixed.roll
        if player.in_jail and not state.rolled:
            if player.jail_cards:
                return self._fixed.jail_card
            if state.round < 15 and player.cash >= state.config.jail_fine + self.reserve:
                return self._fixed.jail_fine
        if self._hurried(state):
            return self._fixed.roll
        return self._build(state, seat) or self._propose(state, seat) or self._manage(state, seat) or self._fixed.roll

    def _hurried(self, state: TableState) -> bool:
        """The turn timer (E1) is running out: no more optional actions."""
        return bool(state.clock) and state.turn_deadline - state.clock < self.time_margin_ms

    def _buy(self, state: TableState, seat: int) -> Command:
        square = state.config.board.squares[state.offer]
        spare = state.players[seat].cash - square.price
        if spare >= self.reserve or (spare >= 0 and self._completes(state, seat, state.offer)):
            return self._fixed.buy
        return self._fixed.decline

    def _bid(self, state: TableState, seat: int) -> Command:
        auction = state.auction
        assert auction is not None
        rules = state.config.auction
        square = state.config.board.squares[auction.square]
        if auction.reason in ("house", "hotel"):  # P10: a building, worth a little over its cost
            value = square.house_cost * 3 // 2
        else:
            value = square.price * self.bid_factor_pct // 100
            if self._completes(state, seat, auction.square):
                value *= 2
        amount = auction.min_bid
        if not rules.start_at_price:  # A2: bids from $10 in $1 steps; jump in tenths of the value
            amount = max(amount, min(value, amount + value // 10))
        if amount <= value and state.players[seat].cash - amount >= self.reserve // 2:
            return Bid(seat, amount)
        return self._fixed.pass_bid

    def _bet(self, state: TableState, seat: int) -> Command:
        rules = state.config.casino
        if state.players[seat].cash >= rules.stake + 2 * self.reserve:
            return PlaceBet(seat, (1, 2, 3) if self.rng.random() < 0.5 else (4, 5, 6))
        return self._fixed.decline_bet

    def _pay(self, state: TableState, seat: int) -> Command:
        due = state.payments[0].amount
        if state.players[seat].cash >= due:
            return self._fixed.pay
        return self._raise_cash(state, seat) or self._fixed.surrender

    def _choose(self, state: TableState, seat: int) -> Command:
        """X6 bus and triple: go for an unowned square; C4 demolition: hit the most built square."""
        squares = state.config.board.squares
        owner = state.owner
        if state.choice == "demolish":
            targets = [sq for sq in state.config.board.purchasable if state.buildings[sq] and owner[sq] != seat]
            return Demolish(seat, max(targets, key=lambda sq: (state.buildings[sq], squares[sq].price)))
        if state.choice == "triple":
            unowned = [sq for sq in state.config.board.purchasable if owner[sq] == BANK]
            return ChooseSquare(seat, max(unowned, key=lambda sq: squares[sq].price) if unowned else 0)
        d1, d2 = state.dice
        here = state.players[seat].position

        def score(steps: int) -> int:
            sq = (here + steps) % 40
            if squares[sq].purchasable:
                return 2 if owner[sq] == BANK else (1 if owner[sq] == seat else -1)
            return 0

        return ChooseBusMove(seat, max((d1 + d2, d1, d2), key=score))

    # -- money management ----------------------------------------------------------
    def _raise_cash(self, state: TableState, seat: int) -> Command | None:
        """Sell a building, else mortgage the least useful property (D1)."""
        board = state.config.board
        best: tuple[int, int] | None = None
        for sq in board.purchasable:
            if state.owner[sq] == seat and state.buildings[sq]:
                group = board.members[board.squares[sq].group]
                if state.buildings[sq] == max(state.buildings[m] for m in group):
                    key = board.squares[sq].house_cost
                    if best is None or key < best[0]:
                        best = (key, sq)
        if best is not None:
            return SellBuilding(seat, best[1])
        for sq in sorted(self._mortgageable(state, seat), key=lambda s: self._keep_value(state, seat, s)):
            return Mortgage(seat, sq)
        return None

    def _mortgageable(self, state: TableState, seat: int) -> list[int]:
        board = state.config.board
        out = []
        for sq in board.purchasable:
            if state.owner[sq] != seat or state.mortgaged_round[sq] >= 0:
                continue
            square = board.squares[sq]
            if square.kind is Kind.PROPERTY and state.group_has_buildings(square.group):
                continue
            out.append(sq)
        return out

    def _keep_value(self, state: TableState, seat: int, sq: int) -> int:
        """How much the bot wants to keep a square: group members count most."""
        square = state.config.board.squares[sq]
        value = square.price
        if square.kind is Kind.PROPERTY and state.owns_group(seat, square.group):
            value *= 4
        return value

    def _manage(self, state: TableState, seat: int) -> Command | None:
        """Lift a mortgage when rich (first mortgaged square in board order)."""
        cash = state.players[seat].cash - 2 * self.reserve
        if cash <= 0:
            return None
        cfg = state.config
        squares = cfg.board.squares
        mortgaged = state.mortgaged_round
        self._refresh(state, seat)  # mostly done already for this decision: a look at own squares only
        for sq in self._owned:
            if mortgaged[sq] >= 0 and cash >= cfg.lift_cost(squares[sq].price):
                return LiftMortgage(seat, sq)
        return None

    def _build(self, state: TableState, seat: int) -> Command | None:
        """One building on the lowest square of the best buildable group (P5-P9 respected)."""
        cfg = state.config
        if cfg is not self._build_rules:  # the settings read at every roll, once per rule set
            self._build_rules = cfg
            self._supply_limited = cfg.house_supply is not None
            self._build_board = cfg.board
            self._group_limit = cfg.builds_per_group_per_turn
        if self._supply_limited:
            return self._build_from_supply(state, seat)
        cash = state.players[seat].cash - self.reserve
        if cash < self.build_min:
            return None
        board = self._build_board
        assert board is not None
        buildings = state.buildings
        mortgaged = state.mortgaged_round
        limit = self._group_limit
        self._refresh(state, seat)
        for group in self._full_groups:
            if limit is not None and state.builds.count(group) >= limit:
                continue
            members = board.members[group]
            if cash < board.squares[members[0]].house_cost or _any_mortgaged(mortgaged, members):
                continue
            target = min(members, key=buildings.__getitem__)
            if buildings[target] < 5:
                return Build(seat, target)
        return None

    def _build_from_supply(self, state: TableState, seat: int) -> Command | None:
        """P10: the same, with the bank's houses and hotels limited: a building won at auction
        is placed first, and at most three building auctions are asked for per turn."""
        won = any(w[0] == seat for w in state.won_buildings)
        cash = state.players[seat].cash - self.reserve
        if not won and cash < self.build_min:
            return None
        asks = self._building_asks[1] if self._building_asks[0] == state.turn_no else 0
        if not won and asks >= 3:
            return None
        board = state.config.board
        buildings = state.buildings
        self._refresh(state, seat)
        for group in self._full_groups:
            members = board.members[group]
            if not won and cash < board.squares[members[0]].house_cost:
                continue
            target = min(members, key=buildings.__getitem__)
            if buildings[target] < 5:
                command = _if_legal(state, Build(seat, target))
                if command is not None:
                    if not won:
                        self._building_asks = (state.turn_no, asks + 1)
                    return command
        return None

    # -- trading -------------------------------------------------------------------
    def _propose(self, state: TableState, seat: int) -> Command | None:
        """Ask for the one square that would complete a group, paying cash or swapping."""
        self._refresh(state, seat)
        if state.proposals or not self._one_short or self.rng.random() >= 0.25:
            return None
        return self._offer(state, seat, ())

    def _offer(self, state: TableState, seat: int, cards: tuple[int, ...]) -> Command | None:
        """The first legal offer of cash (and `cards`) for a square that completes a group."""
        board = state.config.board
        cash = state.players[seat].cash
        owner = state.owner
        for group, sq in self._one_short:
            other = owner[sq]
            if other == BANK or state.mortgaged_round[sq] >= 0 or state.group_has_buildings(group):
                continue
            price = board.squares[sq].price
            offer = min(price * 3 // 2, cash - self.reserve)
            if offer >= price:
                command = _if_legal(
                    state, ProposeTrade(seat, other, give_cash=offer, take_squares=(sq,), give_cards=cards)
                )
                if command is not None:
                    return command
        return None

    # -- outside one's turn (hasbro) ---------------------------------------------------
    def any_time(self, state: TableState, seat: int) -> Command | None:
        """A move of `seat` while another player is to act, or None: place a building won at
        auction or build when rich (P10), or once a turn offer a trade, a Get Out of Jail Free
        card thrown in (T6). The platform's bots ask it of every seat not to act; the simulator
        plays the actor's moves only, so its games do not change."""
        cfg = state.config
        if state.paused or state.finished or state.players[seat].bankrupt:
            return None
        if cfg is not self._config:
            self.configure(cfg)  # money thresholds in the rule set's scale, before a first turn too
        if cfg.manage_any_time:
            command = self._build(state, seat)
            if command is not None and _if_legal(state, command) is not None:
                return command
        if cfg.trade.any_time and self._offered_turn != state.turn_no:
            self._offered_turn = state.turn_no
            self._refresh(state, seat)
            if self._one_short and self.rng.random() < 0.25:
                held = state.players[seat].jail_cards
                return self._offer(state, seat, (held[0],) if held and cfg.trade.jail_cards else ())
        return None

    def _answer_trade(self, state: TableState, seat: int) -> Command:
        trade = state.trade
        assert trade is not None
        board = state.config.board
        gets = trade.give_cash + sum(board.squares[sq].price for sq in trade.give_squares)
        gives = trade.take_cash + sum(board.squares[sq].price for sq in trade.take_squares)
        if trade.give_cards or trade.take_cards:  # T2 (hasbro): a Get Out of Jail Free card is worth a fine
            gets += state.config.jail_fine * len(trade.give_cards)
            gives += state.config.jail_fine * len(trade.take_cards)
        completes_mine = any(self._completes(state, seat, sq) for sq in trade.give_squares)
        breaks_mine = any(self._near_group(state, seat, sq) for sq in trade.take_squares)
        if completes_mine or (not breaks_mine and gets * 100 >= gives * 140):
            return _if_legal(state, AcceptTrade(seat, trade.trade_id)) or DeclineTrade(seat, trade.trade_id)
        return DeclineTrade(seat, trade.trade_id)

    # -- reading the board ------------------------------------------------------------
    def _completes(self, state: TableState, seat: int, sq: int) -> bool:
        """Would owning `sq` give `seat` its whole colour group?"""
        square = state.config.board.squares[sq]
        if square.kind is not Kind.PROPERTY:
            return False
        return all(state.owner[m] == seat for m in state.config.board.members[square.group] if m != sq)

    def _near_group(self, state: TableState, seat: int, sq: int) -> bool:
        """Does `seat` own another square of `sq`'s colour group?"""
        square = state.config.board.squares[sq]
        if square.kind is not Kind.PROPERTY:
            return False
        return any(state.owner[m] == seat for m in state.config.board.members[square.group] if m != sq)


def _only_missing(owner: list[int], members: tuple[int, ...], seat: int) -> int:
    """The one square of `members` that `seat` does not own, or -1 (none or several)."""
    missing = -1
    for sq in members:
        if owner[sq] != seat:
            if missing >= 0:
                return -1
            missing = sq
    return missing


def _any_mortgaged(mortgaged: list[int], members: tuple[int, ...]) -> bool:
    for sq in members:  # a loop, not max() over a generator: this runs at every roll of a builder
        if mortgaged[sq] >= 0:
            return True
    return False


def _if_legal(state: TableState, command: Command) -> Command | None:
    try:
        check(state, command)
    except RuleViolation:
        return None
    return command
