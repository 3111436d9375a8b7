"""Turn flow (G) and the speed die (X6): rolling, moving, doubles, ending the turn.

Rules owned here: G1 the turn order set at the start; G2 a turn (`Roll`,
`EndTurn`); G3 doubles roll again; G4 third doubles go to jail; G5, G6 the
salary's events (the step itself is `flow.move`); G10 dice from the table's
generator; X6 the speed die, the bus and the triple (`ChooseBusMove`,
`ChooseSquare`) and Mr. Monopoly; X3, H3, H4 the deeds dealt at the start.
A roll in jail is J2-J4's (jail.py).
"""

from __future__ import annotations

from typing import Final

from . import jail, rng
from .commands import ChooseBusMove, ChooseSquare, EndTurn, Roll
from .errors import RuleViolation
from .events import (
    BankPaid,
    BoardDealt,
    BusMoveChosen,
    ChoiceOffered,
    DeedsDealt,
    DiceRolled,
    DiceThrown,
    Moved,
    MrMonopolyMoved,
    RentClaimLapsed,
    SentToJail,
    SquareChosen,
    TurnEnded,
    TurnOrderSet,
    TurnStarted,
)
from .flow import (
    ONLY_CHOICE,
    ONLY_POST_ROLL,
    ONLY_PRE_ROLL,
    ROLL_DONE,
    ApplyFn,
    CheckFn,
    Ctx,
    EffectFn,
    actor,
    end_turn,
    land,
    move,
    move_to,
    teammates,
    timer_start,
)
from .reasons import ChoiceKind, JailReason
from .state import BANK, TableState

#: X6: the speed die's six faces: three numbers, Mr. Monopoly twice, the bus.
SPEED_MR_MONOPOLY: Final = 4
SPEED_BUS: Final = 5
SPEED_FACES: Final = (1, 2, 3, SPEED_MR_MONOPOLY, SPEED_MR_MONOPOLY, SPEED_BUS)


def is_triple(d1: int, d2: int, speed: int) -> bool:
    """X6: three equal numbers. Mr. Monopoly and the bus are faces, not numbers: a pair of 4s or 5s
    beside them is doubles, not a triple (their codes, 4 and 5, are no pips)."""
    return 0 < speed <= 3 and d1 == d2 == speed


def set_turn_order(ctx: Ctx) -> None:
    """G1: the turn order, fixed at the start. Online: a random seat order from the table's seed.
    Hasbro (`opening_roll`): every player throws the dice, in seating order, each throw a
    `DiceThrown` so the choice of starter is seen and replayed; the players tied for the highest
    throw again (decision), until one is highest; play starts there and passes to the left, so
    the order is the seating rotated to the starter."""
    state = ctx.state
    n = len(state.players)
    if not state.config.opening_roll:
        ctx.emit(TurnOrderSet(rng.shuffled(range(n), state.rng_seed, state.rng_counter)))
        return
    contenders = list(range(n))
    while len(contenders) > 1:
        throws = []
        for seat in contenders:
            d1, d2 = rng.dice(state.rng_seed, state.rng_counter)
            ctx.emit(DiceThrown(seat, d1, d2))
            throws.append(d1 + d2)
        high = max(throws)
        contenders = [seat for seat, total in zip(contenders, throws, strict=True) if total == high]
    starter = contenders[0]
    ctx.emit(TurnOrderSet(tuple((starter + i) % n for i in range(n))))


# -- checks ------------------------------------------------------------------


def _check_roll(state: TableState, cmd: Roll) -> None:
    actor(state, cmd.seat, ONLY_PRE_ROLL)


def _check_end_turn(state: TableState, cmd: EndTurn) -> None:
    actor(state, cmd.seat, ONLY_POST_ROLL)


def _check_bus(state: TableState, cmd: ChooseBusMove) -> None:
    actor(state, cmd.seat, ONLY_CHOICE, rule="X6")
    if state.choice != "bus":
        raise RuleViolation("X6", "no bus move to choose")
    d1, d2 = state.dice
    steps: object = getattr(cmd, "steps")  # noqa: B009  # untyped read: see clock._check_tick
    if type(steps) is not int or steps not in (d1, d2, d1 + d2):
        raise RuleViolation("X6", f"the bus moves {d1}, {d2} or {d1 + d2} squares")


def _check_square(state: TableState, cmd: ChooseSquare) -> None:
    actor(state, cmd.seat, ONLY_CHOICE, rule="X6")
    if state.choice != "triple":
        raise RuleViolation("X6", "no triple to move with")
    square: object = getattr(cmd, "square")  # noqa: B009  # untyped read: see clock._check_tick
    if type(square) is not int or not 0 <= square < 40:
        raise RuleViolation("B1", f"there is no square {square!r}")


# -- effects -------------------------------------------------------------------


def do_roll(ctx: Ctx, cmd: Roll) -> None:
    state = ctx.state
    seat = cmd.seat
    if state.claim and state.claim[0] != seat:  # H2: the next player rolls, the open claims lapse
        for owner in state.claim[1::4]:
            ctx.emit(RentClaimLapsed(owner))
    d1, d2 = rng.dice(state.rng_seed, state.rng_counter)
    player = state.players[seat]
    was_in_jail = player.in_jail
    speed = 0
    start = state.config.speed_die_from_round
    if start is not None and state.round >= start and not was_in_jail:
        speed = SPEED_FACES[rng.die(state.rng_seed, state.rng_counter + 2) - 1]
    ctx.emit(DiceRolled(seat, d1, d2, speed))
    if was_in_jail:
        if not jail.roll_in_jail(ctx, seat, d1, d2):
            return
    elif state.doubles >= 3:  # G4: jail at once, the square is not resolved
        ctx.emit(SentToJail(seat, JailReason.THIRD_DOUBLES))
        end_turn(ctx)
        return
    elif speed == SPEED_BUS or is_triple(d1, d2, speed):  # X6: bus, or a triple
        ctx.emit(ChoiceOffered(seat, ChoiceKind.BUS if speed == SPEED_BUS else ChoiceKind.TRIPLE))
        return
    move(ctx, seat, d1 + d2 + (speed if speed <= 3 else 0))
    land(ctx, seat)


def _do_end_turn(ctx: Ctx, cmd: EndTurn) -> None:
    end_turn(ctx)


def do_bus(ctx: Ctx, cmd: ChooseBusMove) -> None:
    ctx.emit(BusMoveChosen(cmd.seat, cmd.steps))
    move(ctx, cmd.seat, cmd.steps)
    land(ctx, cmd.seat)


def _do_square(ctx: Ctx, cmd: ChooseSquare) -> None:
    ctx.emit(SquareChosen(cmd.seat, cmd.square))
    move_to(ctx, cmd.seat, cmd.square)
    land(ctx, cmd.seat)


def triple_timed_out(ctx: Ctx, seat: int) -> None:
    """X6 (decision): a triple's time-out moves by the three dice."""
    state = ctx.state
    d1, d2 = state.dice
    ctx.emit(SquareChosen(seat, (state.players[seat].position + d1 + d2 + state.speed) % 40))
    move(ctx, seat, d1 + d2 + state.speed)
    land(ctx, seat)


def mr_monopoly(ctx: Ctx) -> None:
    """X6: once the square of the roll is resolved, on to the nearest unowned property,
    else the nearest one an opponent owns."""
    state = ctx.state
    seat = state.current
    if state.finished or state.paused or state.actor != seat or state.phase not in ROLL_DONE:
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
        move_to(ctx, seat, target)
        land(ctx, seat)


# -- event appliers -------------------------------------------------------------


def _ev_turn_order(s: TableState, e: TurnOrderSet) -> None:
    s.order = list(e.order)
    if s.config.opening_roll:  # G1 (hasbro): the opening throws (`DiceThrown`) drew the dice
        s.throw = 0
    else:
        s.rng_counter += rng.shuffle_draws(len(e.order))


def _ev_turn_started(s: TableState, e: TurnStarted) -> None:
    s.turn_deadline = timer_start(s) + s.config.clock.turn_seconds * 1000  # E1
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
    # M3: the expiry check that follows a turn's start waits while paused or while an auction runs.
    s.expiry_at_resume = s.paused
    if s.auction is not None:
        s.auction.expiry_after = True


def _ev_dice(s: TableState, e: DiceRolled) -> None:
    s.rng_counter += 3 if e.speed else 2
    s.rolled = True
    s.dice = (e.d1, e.d2)
    s.speed = e.speed
    s.mr_monopoly = e.speed == SPEED_MR_MONOPOLY
    player = s.players[e.seat]
    double = e.d1 == e.d2 and not is_triple(e.d1, e.d2, e.speed)  # X6: a triple is not doubles
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


def _ev_turn_ended(s: TableState, e: TurnEnded) -> None:
    if not s.timed_out:
        s.missed[e.seat] = 0  # E2: the missed turns must come in a row


def _ev_choice_offered(s: TableState, e: ChoiceOffered) -> None:
    s.choice = e.kind


def _ev_choice_made(s: TableState, e: BusMoveChosen | SquareChosen) -> None:
    s.choice = ""


def _ev_mr_monopoly(s: TableState, e: MrMonopolyMoved) -> None:
    s.mr_monopoly = False


def _ev_board_dealt(s: TableState, e: BoardDealt) -> None:
    for sq, seat in zip(e.squares, e.owners, strict=True):
        s.owner[sq] = seat
    s.rng_counter += rng.shuffle_draws(len(s.config.board.purchasable))


def _ev_deeds_dealt(s: TableState, e: DeedsDealt) -> None:
    for sq, seat, price in zip(e.squares, e.owners, e.prices, strict=True):
        s.owner[sq] = seat
        s.players[seat].cash -= price
        s.bank_in += price
    s.rng_counter += rng.shuffle_draws(len(s.config.board.purchasable))


COMMANDS: dict[type, tuple[CheckFn, EffectFn]] = {
    Roll: (_check_roll, do_roll),
    EndTurn: (_check_end_turn, _do_end_turn),
    ChooseBusMove: (_check_bus, do_bus),
    ChooseSquare: (_check_square, _do_square),
}

EVENTS: dict[type, ApplyFn] = {
    TurnOrderSet: _ev_turn_order,
    TurnStarted: _ev_turn_started,
    DiceRolled: _ev_dice,
    Moved: _ev_moved,
    BankPaid: _ev_bank_paid,
    TurnEnded: _ev_turn_ended,
    ChoiceOffered: _ev_choice_offered,
    BusMoveChosen: _ev_choice_made,
    SquareChosen: _ev_choice_made,
    MrMonopolyMoved: _ev_mr_monopoly,
    BoardDealt: _ev_board_dealt,
    DeedsDealt: _ev_deeds_dealt,
}
