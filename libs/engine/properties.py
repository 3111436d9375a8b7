"""Buying property (P1) and claiming rent (H2).

Rules owned here: P1 buying at the printed price or declining, which starts an
auction (A1/A2, `flow.start_auction`); H2 (hasbro house rule) rent due only when
the owner claims it before the next roll. P2-P4, the rent itself, is
`flow.rent`, since landing (`flow.land`) charges it; buildings are P5-P10
(buildings.py).
"""

from __future__ import annotations

from .commands import BuyProperty, ClaimRent, DeclineProperty
from .errors import RuleViolation
from .events import PropertyBought, PurchaseDeclined, PurchaseOffered, RentClaimable, RentClaimed, RentClaimLapsed
from .flow import ONLY_BUY, ApplyFn, CheckFn, Ctx, EffectFn, active, actor, charge, start_auction
from .reasons import AuctionReason, PaymentReason
from .state import BANK, TableState


def _check_buy(state: TableState, cmd: BuyProperty) -> None:
    actor(state, cmd.seat, ONLY_BUY, rule="P1")
    if state.owner[state.offer] != BANK:  # sold meanwhile (never expected: a square being auctioned is not offered)
        raise RuleViolation("P1", f"square {state.offer} is no longer the bank's to sell")
    price = state.config.board.squares[state.offer].price
    if state.players[cmd.seat].cash < price:
        raise RuleViolation("P1", f"the price is ${price} and you have ${state.players[cmd.seat].cash}")


def _check_decline(state: TableState, cmd: DeclineProperty) -> None:
    actor(state, cmd.seat, ONLY_BUY, rule="P1")


def _check_claim(state: TableState, cmd: ClaimRent) -> None:
    if state.paused:
        raise RuleViolation("E5", "the game is paused: confirm you are back")
    active(state, cmd.seat)
    if claim_of(state.claim, cmd.seat) < 0:
        raise RuleViolation("H2", "no rent is yours to claim now")


def claim_of(claims: tuple[int, ...], owner: int) -> int:
    """H2: where `owner`'s first open claim starts in `claims` (four numbers each), or -1."""
    for i in range(0, len(claims), 4):
        if claims[i + 1] == owner:
            return i
    return -1


def _do_buy(ctx: Ctx, cmd: BuyProperty) -> None:
    square = ctx.state.offer
    ctx.emit(PropertyBought(cmd.seat, square, ctx.state.config.board.squares[square].price))


def do_decline(ctx: Ctx, cmd: DeclineProperty) -> None:
    state = ctx.state
    square = state.offer
    ctx.emit(PurchaseDeclined(cmd.seat, square))
    excluded = cmd.seat if state.config.auction.decliner_excluded else BANK
    start_auction(ctx, square, AuctionReason.DECLINED, after=cmd.seat, excluded=excluded)


def _do_claim(ctx: Ctx, cmd: ClaimRent) -> None:
    i = claim_of(ctx.state.claim, cmd.seat)
    payer, owner, square, amount = ctx.state.claim[i : i + 4]
    ctx.emit(RentClaimed(cmd.seat))
    charge(ctx, payer, owner, amount, PaymentReason.RENT, square)


def _ev_offered(s: TableState, e: PurchaseOffered) -> None:
    s.offer = e.square


def _ev_bought(s: TableState, e: PropertyBought) -> None:
    s.owner[e.square] = e.seat
    s.players[e.seat].cash -= e.price
    s.bank_in += e.price
    s.offer = -1


def _ev_declined(s: TableState, e: PurchaseDeclined) -> None:
    s.offer = -1


def _ev_claimable(s: TableState, e: RentClaimable) -> None:
    s.claim += (e.payer, e.owner, e.square, e.amount)  # beside any still open (a doubles re-roll)


def _ev_claimed(s: TableState, e: RentClaimed) -> None:
    _drop_claim(s, e.seat)


def _ev_lapsed(s: TableState, e: RentClaimLapsed) -> None:
    _drop_claim(s, e.owner)


def _drop_claim(s: TableState, owner: int) -> None:
    i = claim_of(s.claim, owner)
    s.claim = s.claim[:i] + s.claim[i + 4 :]


COMMANDS: dict[type, tuple[CheckFn, EffectFn]] = {
    BuyProperty: (_check_buy, _do_buy),
    DeclineProperty: (_check_decline, do_decline),
    ClaimRent: (_check_claim, _do_claim),
}

EVENTS: dict[type, ApplyFn] = {
    PurchaseOffered: _ev_offered,
    PropertyBought: _ev_bought,
    PurchaseDeclined: _ev_declined,
    RentClaimable: _ev_claimable,
    RentClaimed: _ev_claimed,
    RentClaimLapsed: _ev_lapsed,
}
