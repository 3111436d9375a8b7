"""Auctions (A), trades (T) and the casino (K): the table's side of its sub-protocols.

Each sub-protocol runs either at the table (its player commands here: `Bid`,
`ProposeTrade`, `PlaceBet`, ...) or at a service (`config.external`), which
sends back only the result (`SettleAuction`, `ExecuteTrade`, `SettleBet`,
the SYSTEM_COMMANDS of game.py). The bidding itself is auction.py, the terms
of a trade trade.py, the bet's odds casino.py.

Rules owned here: A1, A2 who bids and how much (A2's minimums: auction.py),
A3 the bid limit (`_bid_limit`; an auction service's `flow.bid_limits`, kept
up to date by `flow.refresh_auction_limits`; the winner's payment is `flow.after_auction`);
T1 the trade window (`trade_window`), T2 proposing, accepting, declining, the
jail cards of a hasbro trade, T3-T5 the terms (trade.py), T6 hasbro trades any
time; M4's fee for a mortgaged square received (mortgages.py); K1-K4 the bet.
"""

from __future__ import annotations

from dataclasses import replace

from . import auction as auctions
from . import casino
from .commands import Command
from .errors import RuleViolation
from .events import Event, JailCardsTraded, TradeCardsOffered
from .flow import (
    BUILDING_AUCTIONS,
    ONLY_AUCTION,
    ONLY_CASINO,
    ONLY_TRADE,
    TRADE_WINDOWS,
    ApplyFn,
    CheckFn,
    Ctx,
    EffectFn,
    active,
    actor,
    after_auction,
    restart_bid_timer,
    restart_turn_timer,
    teammates,
)
from .mortgages import mortgage_fee
from .reasons import AuctionReason
from .state import BANK, TableState, TradeOffer
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

# -- auctions (A) ---------------------------------------------------------------------


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
    if auction.reason in BUILDING_AUCTIONS:  # P10: a building is won, not a square to mortgage
        return state.raisable(seat) - owed
    return state.raisable(seat) - owed + state.config.board.squares[auction.square].mortgage_value


def _check_bid(state: TableState, cmd: Command) -> None:
    actor(state, cmd.seat, ONLY_AUCTION, rule=state.config.auction.rule)  # A1, A2
    auction = state.auction
    assert auction is not None
    auctions.check(auction, cmd, _bid_limit(state, cmd))


def do_bid(ctx: Ctx, cmd: Command) -> None:
    state = ctx.state
    auction = state.auction
    assert auction is not None
    reason, seller, expiry_after = auction.reason, auction.seller, auction.expiry_after
    for event in auctions.decide(auction, cmd, _bid_limit(state, cmd)):
        ctx.emit(event)
        if isinstance(event, auctions.AuctionSettled):
            after_auction(ctx, event, reason, seller, expiry_after=expiry_after)


def _external(state: TableState, sub_protocol: str, rule: str) -> None:
    if sub_protocol not in state.config.external:
        raise RuleViolation(rule, f"this table runs its {sub_protocol} itself")
    if state.finished:
        raise RuleViolation("D5", "the game is over")


def _check_settle_auction(state: TableState, cmd: auctions.SettleAuction) -> None:
    rule = state.config.auction.rule  # A1, A2
    _external(state, "auction", rule)
    auction = state.auction
    if auction is None or auction.auction_id != cmd.auction_id:
        done = cmd.auction_id < state.next_auction_id and (auction is None or cmd.auction_id < auction.auction_id)
        raise RuleViolation(rule, f"auction {cmd.auction_id} is {'already settled' if done else 'not open'}")
    if cmd.winner != BANK:
        if cmd.winner not in auction.bidders:
            raise RuleViolation(rule, f"seat {cmd.winner} was not a bidder in auction {cmd.auction_id}")
        if type(cmd.price) is not int or cmd.price < auction.start_price:
            raise RuleViolation(rule, f"the winning bid must be at least ${auction.start_price}")


def _do_settle_auction(ctx: Ctx, cmd: auctions.SettleAuction) -> None:
    auction = ctx.state.auction
    assert auction is not None
    winner, price = cmd.winner, cmd.price
    if winner != BANK and ctx.state.players[winner].bankrupt:  # the winner left meanwhile: no sale
        winner, price = BANK, 0
    settled = auctions.AuctionSettled(auction.auction_id, auction.square, winner, price)
    reason, seller = auction.reason, auction.seller
    ctx.emit(settled)
    after_auction(ctx, settled, reason, seller, expiry_after=auction.expiry_after)


# -- trades (T) -------------------------------------------------------------------------


def trade_window(state: TableState, seat: int) -> None:
    """T1, T6: may `seat` propose a trade to be agreed at a trade service now?

    The trade service asks it of a proposal and the table of its execution, so the window is
    written once. Online (T1): the seat the game waits for, before rolling, deciding a purchase or
    paying (the player whose turn it is, or a debtor outside their turn). Hasbro (T6): any active
    player at any time the game is not paused.
    """
    if state.finished:
        raise RuleViolation("D5", "the game is over")
    if state.paused:
        raise RuleViolation("E5", "the game is paused")
    if state.config.trade.any_time:
        active(state, seat)
        return
    _online_window(state, seat)


def _online_window(state: TableState, seat: int) -> None:
    """T1 (online), at the table and at a trade service alike: the seat the game waits for, in a
    window: the player whose turn it is, or a debtor in debt resolution (short of cash, D1) outside
    their own turn. A debtor outside their turn whose cash covers the payment has only to pay."""
    actor(state, seat, TRADE_WINDOWS, rule="T1")
    if seat != state.current and state.payments and state.players[seat].cash >= state.payments[0].amount:
        raise RuleViolation(
            "T1", "outside your turn you may propose only in debt resolution; your cash covers the payment: pay it"
        )


def _check_propose(state: TableState, cmd: ProposeTrade) -> None:
    if state.config.trade.any_time:  # T6: any active player, any time but during another proposal
        if state.paused:
            raise RuleViolation("E5", "the game is paused: confirm you are back")
        active(state, cmd.seat)
        if state.trade is not None:
            raise RuleViolation("T6", "another proposal is waiting for its answer")
    else:
        _online_window(state, cmd.seat)
    limit = state.config.trade.max_proposals_per_turn
    if limit is not None and state.proposals >= limit:
        raise RuleViolation("T1", f"at most {limit} trade proposals per turn")
    validate_terms(state, offer_of(state.next_trade_id, cmd), teammates(state, cmd.seat, cmd.counterparty))


def _pending_trade(state: TableState, seat: int, trade_id: object) -> TradeOffer:
    """The open proposal `trade_id` names (read untyped from the command: see `flow.property_of`)."""
    actor(state, seat, ONLY_TRADE, rule="T2")
    trade = state.trade
    assert trade is not None
    if type(trade_id) is not int or trade_id != trade.trade_id:  # 1.0 and True equal 1, and are no trade id
        raise RuleViolation("T2", f"trade {trade_id!r} is not the open proposal (that is {trade.trade_id})")
    return trade


def _check_accept(state: TableState, cmd: AcceptTrade) -> None:
    trade = _pending_trade(state, cmd.seat, getattr(cmd, "trade_id"))  # noqa: B009
    validate_terms(state, trade, teammates(state, trade.proposer, trade.counterparty))


def _check_decline_trade(state: TableState, cmd: DeclineTrade) -> None:
    _pending_trade(state, cmd.seat, getattr(cmd, "trade_id"))  # noqa: B009


def _do_propose(ctx: Ctx, cmd: ProposeTrade) -> None:
    o = offer_of(ctx.state.next_trade_id, cmd)
    ctx.emit(
        TradeProposed(o.trade_id, o.proposer, o.counterparty, o.give_cash, o.give_squares, o.take_cash, o.take_squares)
    )
    if o.give_cards or o.take_cards:  # T2 (hasbro)
        ctx.emit(TradeCardsOffered(o.trade_id, o.give_cards, o.take_cards))


def _do_accept(ctx: Ctx, cmd: AcceptTrade) -> None:
    o = ctx.state.trade
    assert o is not None
    _execute_trade(ctx, o)


def _execute_trade(ctx: Ctx, o: TradeOffer) -> None:
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
                    mortgage_fee(ctx, receiver, sq)


def do_decline_trade(ctx: Ctx, cmd: DeclineTrade) -> None:
    ctx.emit(TradeDeclined(cmd.trade_id, cmd.seat))


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
    offer = offer_of(cmd.trade_id, cmd)
    validate_terms(state, offer, teammates(state, cmd.seat, cmd.counterparty))
    _check_terms_stand(state, cmd, offer.give_squares + offer.take_squares)


def _check_terms_stand(state: TableState, cmd: ExecuteTrade, squares: tuple[int, ...]) -> None:
    """T2: the squares stand as offered. A trade service holds a proposal without the table knowing,
    so the table cannot refuse a mortgage of an offered square meanwhile (as it does for its own
    proposals); instead the agreed trade is refused if any traded square was mortgaged or lifted since."""
    if getattr(cmd, "mortgages_recorded") is not True:  # noqa: B009 - untyped read, as offer_of
        return
    recorded = getattr(cmd, "mortgaged_squares")  # noqa: B009
    if not isinstance(recorded, (tuple, list)) or any(type(sq) is not int for sq in recorded):
        raise RuleViolation("T2", "the mortgaged squares of a trade are a list of whole numbers")
    board = state.config.board.squares
    for sq in squares:
        mortgaged = state.mortgaged_round[sq] >= 0
        if mortgaged != (sq in recorded):
            change = "mortgaged" if mortgaged else "lifted (M2)"
            raise RuleViolation("T2", f"{board[sq].name} was {change} since the proposal: the terms no longer stand")


def _do_execute_trade(ctx: Ctx, cmd: ExecuteTrade) -> None:
    _execute_trade(ctx, offer_of(cmd.trade_id, cmd))


# -- the casino (K) -----------------------------------------------------------------------


def _check_bet(state: TableState, cmd: casino.PlaceBet) -> None:
    actor(state, cmd.seat, ONLY_CASINO, rule="K1")
    rules = state.config.casino
    casino.check_numbers(tuple(cmd.numbers), rules)
    if state.players[cmd.seat].cash < rules.stake:
        raise RuleViolation("K1", f"the stake is ${rules.stake}")


def _check_decline_bet(state: TableState, cmd: casino.DeclineBet) -> None:
    actor(state, cmd.seat, ONLY_CASINO, rule="K1")


def _do_bet(ctx: Ctx, cmd: casino.PlaceBet) -> None:
    state = ctx.state
    rules = state.config.casino
    numbers = tuple(sorted(cmd.numbers))
    ctx.emit(casino.BetPlaced(cmd.seat, numbers, rules.stake, rules.pool_per_bet))
    die, jackpot_hit = casino.draw(state.rng_seed, state.rng_counter, rules)
    ctx.emit(casino.settle(cmd.seat, numbers, die, jackpot_hit, state.jackpot, rules, casino.DRAWS_PER_BET))


def do_decline_bet(ctx: Ctx, cmd: casino.DeclineBet) -> None:
    ctx.emit(casino.BetDeclined(cmd.seat))


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


def _do_settle_bet(ctx: Ctx, cmd: casino.SettleBet) -> None:
    if not cmd.numbers:
        ctx.emit(casino.BetDeclined(cmd.seat))
        return
    state = ctx.state
    rules = state.config.casino
    numbers = tuple(sorted(cmd.numbers))
    ctx.emit(casino.BetPlaced(cmd.seat, numbers, rules.stake, rules.pool_per_bet))
    ctx.emit(casino.settle(cmd.seat, numbers, cmd.die, bool(cmd.jackpot_hit), state.jackpot, rules, 0))


# -- event appliers ------------------------------------------------------------------------


def _ev_auction_started(s: TableState, e: auctions.AuctionStarted) -> None:
    if s.auction_queue and e.reason == AuctionReason.BANKRUPT:  # D4
        s.auction_queue.remove(e.square)
    s.auction = auctions.open_auction(e)
    s.next_auction_id = e.auction_id + 1
    restart_bid_timer(s)  # E1, A1


def _ev_auction_move(s: TableState, e: Event) -> None:
    assert s.auction is not None
    auctions.evolve(s.auction, e)
    restart_bid_timer(s)


def _ev_auction_limits(s: TableState, e: auctions.AuctionLimitsChanged) -> None:
    assert s.auction is not None and s.auction.auction_id == e.auction_id
    s.auction.limits = e.limits


def _ev_auction_settled(s: TableState, e: auctions.AuctionSettled) -> None:
    auction = s.auction
    seller = auction.seller if auction is not None else BANK
    reason = auction.reason if auction is not None else None
    if s.paused and auction is not None and (auction.expiry_after or reason == AuctionReason.MORTGAGE_EXPIRED):
        s.expiry_at_resume = True  # M3: the check after this auction (`after_auction`) waits for the resume
    s.auction = None
    s.next_auction_id = max(s.next_auction_id, e.auction_id + 1)
    if e.winner != BANK and reason in BUILDING_AUCTIONS:  # P10: a building to place, not a square
        s.won_buildings.append((e.winner, BUILDING_AUCTIONS[reason]))
    elif e.winner != BANK:
        s.owner[e.square] = e.winner
        if seller != BANK:  # X3: sold out of its mortgage
            s.mortgaged_round[e.square] = -1
    restart_turn_timer(s)


def _ev_trade_proposed(s: TableState, e: TradeProposed) -> None:
    s.trade = TradeOffer(
        e.trade_id, e.proposer, e.counterparty, e.give_cash, e.give_squares, e.take_cash, e.take_squares
    )
    s.proposals += 1
    s.next_trade_id = e.trade_id + 1
    if s.auction is not None:  # T6 (hasbro): proposed during an auction, answered in a bid's time
        restart_bid_timer(s)


def _ev_trade_executed(s: TableState, e: TradeExecuted) -> None:
    apply_offer(s, e)
    s.next_trade_id = max(s.next_trade_id, e.trade_id + 1)
    if s.trade is not None:  # the proposal held the game (a trade service's proposals don't)
        _trade_closed(s)


def _ev_trade_declined(s: TableState, e: TradeDeclined) -> None:
    _trade_closed(s)


def _trade_closed(s: TableState) -> None:
    """Play comes back from the answer: the turn timer, and a bidder's 20 s, start again (E1, A1)."""
    s.trade = None
    restart_turn_timer(s)
    if s.auction is not None:
        restart_bid_timer(s)


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


COMMANDS: dict[type, tuple[CheckFn, EffectFn]] = {
    auctions.Bid: (_check_bid, do_bid),
    auctions.PassBid: (_check_bid, do_bid),
    ProposeTrade: (_check_propose, _do_propose),
    AcceptTrade: (_check_accept, _do_accept),
    DeclineTrade: (_check_decline_trade, do_decline_trade),
    casino.PlaceBet: (_check_bet, _do_bet),
    casino.DeclineBet: (_check_decline_bet, do_decline_bet),
    auctions.SettleAuction: (_check_settle_auction, _do_settle_auction),
    casino.SettleBet: (_check_settle_bet, _do_settle_bet),
    ExecuteTrade: (_check_execute_trade, _do_execute_trade),
}

EVENTS: dict[type, ApplyFn] = {
    auctions.AuctionStarted: _ev_auction_started,
    auctions.BidPlaced: _ev_auction_move,
    auctions.BidPassed: _ev_auction_move,
    auctions.AuctionLimitsChanged: _ev_auction_limits,
    auctions.AuctionSettled: _ev_auction_settled,
    TradeProposed: _ev_trade_proposed,
    TradeExecuted: _ev_trade_executed,
    TradeDeclined: _ev_trade_declined,
    TradeCardsOffered: _ev_cards_offered,
    JailCardsTraded: _ev_cards_traded,
    casino.CasinoOpened: _ev_casino_opened,
    casino.BetPlaced: _ev_bet_placed,
    casino.BetSettled: _ev_bet_settled,
    casino.BetDeclined: _ev_bet_declined,
}

#: Results of sub-protocols run by services: the platform sends them, a player's token never may.
SYSTEM_COMMANDS: frozenset[type] = frozenset({auctions.SettleAuction, casino.SettleBet, ExecuteTrade})
#: Player commands a service takes instead of the table when the sub-protocol is external.
EXTERNAL_COMMANDS: dict[str, frozenset[type]] = {
    "auction": frozenset({auctions.Bid, auctions.PassBid}),
    "trade": frozenset({ProposeTrade, AcceptTrade, DeclineTrade}),
    "casino": frozenset({casino.PlaceBet, casino.DeclineBet}),
}
