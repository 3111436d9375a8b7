"""Jail (J): going in, the fine, the card, rolling for doubles, the forced fine.

Rules owned here: J1 the three ways in (the events come from `flow.land` G7,
a card C1/C4 and third doubles G4; this module applies them); J2 leaving by
the fine (`PayJailFine`) or a Get Out of Jail Free card (`UseJailCard`, C3
back to the bottom of its deck); J3 doubles free the player, who moves by that
roll only; J4 the third failed roll forces the fine, then the move (the move
follows the payment, debts.py).
"""

from __future__ import annotations

from .commands import PayJailFine, UseJailCard
from .errors import RuleViolation
from .events import LeftJail, SentToJail
from .flow import (
    JAIL_SQUARE,
    ONLY_PRE_ROLL,
    ApplyFn,
    CheckFn,
    Ctx,
    EffectFn,
    actor,
    charge,
    reshuffle_before_returning,
    return_card,
)
from .reasons import JailExit, PaymentReason
from .state import BANK, TableState


def roll_in_jail(ctx: Ctx, seat: int, d1: int, d2: int) -> bool:
    """J3, J4: the roll of a player in jail (its DiceRolled applied); True if they move by it now."""
    state = ctx.state
    if d1 == d2:  # J3: free, move by this roll, no further roll
        ctx.emit(LeftJail(seat, JailExit.DOUBLES))
        return True
    if state.players[seat].jail_turns >= state.config.max_jail_turns:  # J4: forced fine, then move
        charge(ctx, seat, BANK, state.config.jail_fine, PaymentReason.JAIL_FINE, JAIL_SQUARE, then_move=True)
    return False


def _check_jail_fine(state: TableState, cmd: PayJailFine) -> None:
    actor(state, cmd.seat, ONLY_PRE_ROLL, rule="J2")
    player = state.players[cmd.seat]
    if not player.in_jail:
        raise RuleViolation("J2", "you are not in jail")
    if player.cash < state.config.jail_fine:
        raise RuleViolation("J2", f"the fine is ${state.config.jail_fine} and you have ${player.cash}")


def _check_jail_card(state: TableState, cmd: UseJailCard) -> None:
    actor(state, cmd.seat, ONLY_PRE_ROLL, rule="J2")
    player = state.players[cmd.seat]
    if not player.in_jail:
        raise RuleViolation("J2", "you are not in jail")
    if not player.jail_cards:
        raise RuleViolation("J2", "you hold no Get Out of Jail Free card")


def _do_jail_fine(ctx: Ctx, cmd: PayJailFine) -> None:
    ctx.emit(LeftJail(cmd.seat, JailExit.FINE, ctx.state.config.jail_fine))


def _do_jail_card(ctx: Ctx, cmd: UseJailCard) -> None:
    reshuffle_before_returning(ctx, ctx.state.players[cmd.seat].jail_cards[:1])  # C4: not into an empty pile
    ctx.emit(LeftJail(cmd.seat, JailExit.CARD))


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
    if e.how == JailExit.CARD:  # C3/C4: the used card goes to the bottom of the pile
        return_card(s, player.jail_cards.pop(0))
    if e.fine:
        player.cash -= e.fine
        s.bank_in += e.fine


COMMANDS: dict[type, tuple[CheckFn, EffectFn]] = {
    PayJailFine: (_check_jail_fine, _do_jail_fine),
    UseJailCard: (_check_jail_card, _do_jail_card),
}

EVENTS: dict[type, ApplyFn] = {
    SentToJail: _ev_jailed,
    LeftJail: _ev_left_jail,
}
