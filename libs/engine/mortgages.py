"""Mortgages (M) and Duel's own-mortgage auction (X3).

Rules owned here: M1 mortgaging (no buildings in the group); M2 lifting (value
+10% hasbro, 60% of the price online); M3 (online) a mortgage not lifted in
time is lost to an auction at the full price (`expire_mortgages`, run at
each turn's start by `flow.end_turn`); M4 (hasbro) the fee on a mortgaged
square received in a trade or a bankruptcy (`mortgage_fee`); X3 (Duel) an
owner's auction of their own mortgaged property (`AuctionMortgaged`). A seat
that is not the one to act breaks G2 (`flow.actor`), unless `manage_any_time`
(hasbro, P10/G9) lets it act.
"""

from __future__ import annotations

from .board import Kind
from .commands import AuctionMortgaged, LiftMortgage, Mortgage
from .errors import RuleViolation
from .events import MortgageExpired, MortgageFeeDue, MortgageLifted, PropertyMortgaged
from .flow import (
    LIFT,
    MANAGE,
    OWNER_SALE,
    ApplyFn,
    CheckFn,
    Ctx,
    EffectFn,
    actor,
    any_time,
    bankrupt,
    property_of,
    restart_turn_timer,
    start_auction,
    start_payment_timer,
)
from .reasons import AuctionReason, PaymentReason
from .state import BANK, Payment, TableState


def _check_mortgage(state: TableState, cmd: Mortgage) -> None:
    if state.config.manage_any_time:
        any_time(state, cmd.seat)
    else:
        actor(state, cmd.seat, MANAGE, rule="M1", turn_rule="G2")
    property_of(state, cmd.seat, getattr(cmd, "square"), "M1")  # noqa: B009
    if state.mortgaged_round[cmd.square] >= 0:
        raise RuleViolation("M1", "already mortgaged")
    _not_offered(state, cmd.square)
    square = state.config.board.squares[cmd.square]
    if square.kind is Kind.PROPERTY and state.group_has_buildings(square.group):
        raise RuleViolation("M1", "sell the group's buildings first")


def _check_lift(state: TableState, cmd: LiftMortgage) -> None:
    if state.config.manage_any_time:
        any_time(state, cmd.seat)
    else:
        actor(state, cmd.seat, LIFT, rule="M2", turn_rule="G2")
    property_of(state, cmd.seat, getattr(cmd, "square"), "M2")  # noqa: B009
    if state.mortgaged_round[cmd.square] < 0:
        raise RuleViolation("M2", "not mortgaged")
    _not_offered(state, cmd.square)
    cost = state.config.lift_cost(state.config.board.squares[cmd.square].price)
    if state.players[cmd.seat].cash < cost:
        raise RuleViolation("M2", f"lifting costs ${cost}")


def _not_offered(state: TableState, square: int) -> None:
    """T2: hasbro (P10) lets players mortgage and lift at any time, also while a proposal waits; an offered
    square mortgaged or lifted meanwhile would reach the other side on terms changed under their answer
    (mortgaged with an M4 fee, or lifted with none)."""
    trade = state.trade
    if trade is not None and (square in trade.give_squares or square in trade.take_squares):
        raise RuleViolation("T2", f"square {square} is in the open trade proposal: it stands as offered until answered")


def _check_mortgage_auction(state: TableState, cmd: AuctionMortgaged) -> None:
    actor(state, cmd.seat, OWNER_SALE, rule="X3", turn_rule="G2")
    if not state.config.mortgage_auction:
        raise RuleViolation("X3", "only Duel auctions one's own mortgaged property")
    property_of(state, cmd.seat, getattr(cmd, "square"), "X3")  # noqa: B009
    if state.mortgaged_round[cmd.square] < 0:
        raise RuleViolation("X3", "only a mortgaged property goes to this auction")


def do_mortgage(ctx: Ctx, cmd: Mortgage) -> None:
    value = ctx.state.config.board.squares[cmd.square].mortgage_value
    ctx.emit(PropertyMortgaged(cmd.seat, cmd.square, value))


def _do_lift(ctx: Ctx, cmd: LiftMortgage) -> None:
    cfg = ctx.state.config
    ctx.emit(MortgageLifted(cmd.seat, cmd.square, cfg.lift_cost(cfg.board.squares[cmd.square].price)))


def _do_mortgage_auction(ctx: Ctx, cmd: AuctionMortgaged) -> None:
    start_auction(ctx, cmd.square, AuctionReason.OWNER_SALE, after=cmd.seat, excluded=cmd.seat, seller=cmd.seat)


def expire_mortgages(ctx: Ctx) -> None:
    """M3: the current player's first mortgage older than the limit goes to auction."""
    state = ctx.state
    limit = state.config.mortgage_expiry_rounds
    if limit is None or state.round <= limit or state.auction is not None or state.finished or state.paused:
        return  # E5: a pause puts it off to the resume (clock.auctions_put_off)
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
            start_auction(ctx, sq, AuctionReason.MORTGAGE_EXPIRED, after=seat, excluded=BANK)
            return


def mortgage_fee(ctx: Ctx, seat: int, square: int) -> None:
    """M4: the receiver of a mortgaged square pays the fee (`Pay`) or lifts the mortgage at once."""
    state = ctx.state
    fee = state.config.transfer_fee(state.config.board.squares[square].price)
    if fee <= 0 or state.players[seat].bankrupt:
        return
    owed = fee + sum(p.amount for p in state.payments if p.debtor == seat)
    if state.players[seat].cash < owed and state.raisable(seat) < owed:
        bankrupt(ctx, seat, BANK)
        return
    ctx.emit(MortgageFeeDue(seat, square, fee))


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
        # Only the lifter's own fee: an earlier receiver who passed the square on unpaid still owes theirs
        # (a table recorded before that rule replays as it was played: `mortgage_fee_own_only` off).
        own_only = s.config.mortgage_fee_own_only
        s.payments = [
            p
            for p in payments
            if not (
                p.square == e.square and p.reason == PaymentReason.MORTGAGE_FEE and (p.debtor == e.seat or not own_only)
            )
        ]
        if s.payments and s.payments[0] is not first:
            start_payment_timer(s)
        if first not in s.payments and first.deadline >= 0:
            restart_turn_timer(s)


def _ev_expired(s: TableState, e: MortgageExpired) -> None:
    s.owner[e.square] = BANK
    s.mortgaged_round[e.square] = -1


def _ev_fee_due(s: TableState, e: MortgageFeeDue) -> None:
    s.payments.append(Payment(e.seat, BANK, e.amount, PaymentReason.MORTGAGE_FEE, square=e.square))
    if len(s.payments) == 1:
        start_payment_timer(s)


COMMANDS: dict[type, tuple[CheckFn, EffectFn]] = {
    Mortgage: (_check_mortgage, do_mortgage),
    LiftMortgage: (_check_lift, _do_lift),
    AuctionMortgaged: (_check_mortgage_auction, _do_mortgage_auction),
}

EVENTS: dict[type, ApplyFn] = {
    PropertyMortgaged: _ev_mortgaged,
    MortgageLifted: _ev_lifted,
    MortgageExpired: _ev_expired,
    MortgageFeeDue: _ev_fee_due,
}
