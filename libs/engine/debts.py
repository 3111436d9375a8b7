"""Debts, bankruptcy and the end of the game (D).

Rules owned here: D1 a mandatory payment, paid by `Pay` once the cash is
there (its timer: `flow.start_payment_timer`); D2 surrender and bankruptcy
when the debt cannot be raised (the step is `flow.bankrupt`, charged by
`flow.charge`); D3 bankrupt to a player, D4 to the bank (X4: the teammate
takes over), applied by `_ev_bankrupt`; D5 the winner and the places
(`GameEnded`). The time-out's liquidation is E2's (clock.py). R3 leaving the
game (`Leave`): any active player, at any time, bankrupt to the bank whoever
they owe, where a surrender in debt to a player goes to that player (D3).
"""

from __future__ import annotations

from dataclasses import replace

from .auction import withdraw
from .commands import Leave, Pay, Surrender
from .errors import RuleViolation
from .events import GameEnded, LeftJail, PaymentDue, PaymentMade, PlayerBankrupt
from .flow import (
    MANAGE,
    ONLY_PAYMENT,
    ApplyFn,
    CheckFn,
    Ctx,
    EffectFn,
    active,
    actor,
    bankrupt,
    demolition_targets,
    land,
    move,
    restart_bid_timer,
    restart_turn_timer,
    return_card,
    start_payment_timer,
)
from .reasons import BankruptCause, JailExit
from .state import BANK, Payment, TableState


def _check_pay(state: TableState, cmd: Pay) -> None:
    actor(state, cmd.seat, ONLY_PAYMENT, rule="D1")
    due = state.payments[0].amount
    cash = state.players[cmd.seat].cash
    if cash < due:
        raise RuleViolation("D1", f"${due} is due and you have ${cash}: sell, mortgage, trade or surrender")


def _check_surrender(state: TableState, cmd: Surrender) -> None:
    actor(state, cmd.seat, MANAGE, rule="D2")


def _check_leave(state: TableState, cmd: Leave) -> None:
    active(state, cmd.seat)  # in any phase and out of turn; paused too (E5 then waits for one fewer)


def _do_leave(ctx: Ctx, cmd: Leave) -> None:
    bankrupt(ctx, cmd.seat, BANK, BankruptCause.SURRENDER)


def do_pay(ctx: Ctx, cmd: Pay) -> None:
    due = ctx.state.payments[0]
    ctx.emit(PaymentMade(due.debtor, due.creditor, due.amount, due.reason, due.bank_share, due.square))
    if due.then_move:  # J4: the forced fine is paid, move by the third roll
        ctx.emit(LeftJail(cmd.seat, JailExit.FORCED_FINE))
        d1, d2 = ctx.state.dice
        move(ctx, cmd.seat, d1 + d2)
        land(ctx, cmd.seat)


def _do_surrender(ctx: Ctx, cmd: Surrender) -> None:
    state = ctx.state
    creditor = BANK
    if state.payments and state.payments[0].debtor == cmd.seat:
        creditor = state.payments[0].creditor  # D3: surrendering a debt to a player
    bankrupt(ctx, cmd.seat, creditor, BankruptCause.SURRENDER)


def _ev_payment_due(s: TableState, e: PaymentDue) -> None:
    s.payments.append(Payment(e.debtor, e.creditor, e.amount, e.reason, e.then_move, e.bank_share, square=e.square))
    if len(s.payments) == 1:
        start_payment_timer(s)


def _ev_payment_made(s: TableState, e: PaymentMade) -> None:
    paid = s.payments.pop(0)
    s.players[e.debtor].cash -= e.amount
    if e.creditor == BANK:
        s.bank_in += e.amount
    else:
        s.players[e.creditor].cash += e.amount - e.bank_share
        s.bank_in += e.bank_share
    if s.payments:
        start_payment_timer(s)
    elif s.auction is not None:  # A1, E1: nobody could bid while it was due: the bidder's 20 s from now
        restart_bid_timer(s)
    if paid.deadline >= 0:  # back from a debt or another player's payment
        restart_turn_timer(s)


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
            return_card(s, card_id)
    player.jail_cards.clear()
    if s.won_buildings:  # P10: unplaced buildings go back to the bank
        s.won_buildings = [w for w in s.won_buildings if w[0] != e.seat]
    if s.claim:  # H2: the bankrupt's claims, and those on them, are gone
        kept = [s.claim[i : i + 4] for i in range(0, len(s.claim), 4) if e.seat not in s.claim[i : i + 2]]
        s.claim = tuple(n for claim in kept for n in claim)
    player.bankrupt = True
    player.in_jail = False
    if s.choice == "demolish" and not demolition_targets(s, s.current):
        s.choice = ""  # C4: the last opponent's buildings went with them: with no such square, nothing
    player.place = e.place
    s.eliminated.append(e.seat)
    first = s.payments[0] if s.payments else None
    s.payments = [
        _without(p, e.seat) for p in s.payments if p.debtor != e.seat and (p.creditor != e.seat or p.bank_share)
    ]
    if first is not None and (not s.payments or s.payments[0] is not first):  # the one due first went
        if s.payments:
            start_payment_timer(s)  # D1, E1: the next debtor's own timer
        if first.deadline >= 0:
            restart_turn_timer(s)  # back from another player's debt, as when it is paid
        if not s.payments and s.auction is not None:
            restart_bid_timer(s)  # A1, E1: nobody could bid while it was due, as when it is paid
    if s.trade is not None and e.seat in (s.trade.proposer, s.trade.counterparty):
        s.trade = None
        restart_turn_timer(s)  # play comes back, as when the proposal is declined (E1)
    if s.auction is not None:
        turn = s.auction.turn
        withdraw(s.auction, e.seat)
        if s.auction.turn != turn:  # A1, E1: the next bidder has their own 20 s, not what was left
            restart_bid_timer(s)
    if e.seat in s.pause_votes:
        s.pause_votes.remove(e.seat)
    if e.seat in s.back:
        s.back.remove(e.seat)
    if e.seat == s.current:
        s.offer = -1
        s.casino = False
        s.roll_again = False


def _without(payment: Payment, seat: int) -> Payment:
    """R3, D3: a payment once `seat` is out. What it owed the leaver is dropped, but not the bank's share
    of it (E4's rent tax, X3's lifting cost): that was never the leaver's, so it is still owed to the bank."""
    if payment.creditor != seat:
        return payment
    return replace(payment, creditor=BANK, amount=payment.bank_share, bank_share=0)


def _ev_game_ended(s: TableState, e: GameEnded) -> None:
    """D5, H6: the game is over, and so is every payment still pending (a worth counted them as made)."""
    s.finished = True
    s.payments = []
    s.winner = e.winner
    s.end_reason = e.reason
    for player, place in zip(s.players, e.places, strict=True):
        player.place = place


COMMANDS: dict[type, tuple[CheckFn, EffectFn]] = {
    Pay: (_check_pay, do_pay),
    Surrender: (_check_surrender, _do_surrender),
    Leave: (_check_leave, _do_leave),
}

EVENTS: dict[type, ApplyFn] = {
    PaymentDue: _ev_payment_due,
    PaymentMade: _ev_payment_made,
    PlayerBankrupt: _ev_bankrupt,
    GameEnded: _ev_game_ended,
}
