"""The online clock (E): ticks, timers, time-outs and pauses. The top rule area.

Time enters only as `Tick(now)` commands. Rules owned here: E1 the turn, bid
and debt timers (`next_deadline`); E2 a time-out acts for the player
(`_default_action`: decline, pay, the default choice) and counts missed turns,
three in a row bankrupt; E2's decision on a debt's time-out (`_liquidate_and_pay`);
E5 pausing (`RequestPause`, `VotePause`, `ConfirmBack`) and the frozen timers;
E6 the table's clock never goes back. E3, E4 (salary stop, rent tax) are read
where salary and rent are paid (flow.py).
"""

from __future__ import annotations

from . import auction as auctions
from . import casino, flow
from .buildings import do_sell
from .commands import (
    ChooseBusMove,
    ConfirmBack,
    DeclineProperty,
    Demolish,
    Mortgage,
    Pay,
    RequestPause,
    Roll,
    SellBuilding,
    Tick,
    VotePause,
)
from .debts import do_pay
from .decks import do_demolish
from .delegated import do_bid, do_decline_bet, do_decline_trade
from .errors import RuleViolation
from .events import (
    BackConfirmed,
    ClockAdvanced,
    GamePaused,
    GameResumed,
    PauseRejected,
    PauseRequested,
    PauseVoted,
    ResumeScheduled,
    TimedOut,
    TurnTimedOut,
)
from .flow import ApplyFn, CheckFn, Ctx, EffectFn, active, bankrupt, demolition_targets, end_turn, nothing, owned
from .mortgages import do_mortgage
from .properties import do_decline
from .reasons import BankruptCause, PauseRejection, TimeoutKind
from .state import BANK, Phase, TableState
from .trade import DeclineTrade
from .turn import do_bus, do_roll, mr_monopoly, triple_timed_out


def _check_tick(state: TableState, cmd: Tick) -> None:
    # Read without the field's type: compiled with mypyc (make compile), `cmd.now` would
    # raise TypeError for a non-int before the rule could refuse it.
    now: object = getattr(cmd, "now")  # noqa: B009
    if type(now) is not int:
        raise RuleViolation("E6", f"the clock reads whole milliseconds, not {now!r}")
    if cmd.now < state.clock:
        raise RuleViolation("E6", f"the clock does not go back ({cmd.now} < {state.clock})")


def _do_tick(ctx: Ctx, cmd: Tick) -> None:
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
            mr_monopoly(ctx)
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
    if phase is Phase.TRADE:  # answered on a debt's timer (D1), else in a bid's time during an auction (T6)
        debt = state.payments[0].deadline if state.payments else -1
        if debt >= 0:  # before the debt's time ends, even with an auction waiting behind the payment
            return debt
        if state.auction is not None and "auction" not in state.config.external:
            return state.bid_deadline
        return state.turn_deadline
    if phase is Phase.PAYMENT and state.payments[0].deadline >= 0:
        return state.payments[0].deadline
    return state.clock if state.timed_out else state.turn_deadline


def auctions_put_off(ctx: Ctx, expiry: bool) -> None:
    """E5: the auctions that waited for the resume open now: a turn that started during the pause
    (its player left, R3) has its M3 expiry (`expiry`: `expiry_at_resume` as it stood before the
    resume), then the D4 queue has its next auction. No auction opens while paused: a delegated
    one's bid clock would run at the auction service meanwhile. A turn whose expiry was checked at
    its start is not checked again: a mortgage received since waits for its owner's next turn."""
    if expiry:
        flow.STEPS.expire_mortgages(ctx)
    flow.auction_returned(ctx)


def _fire(ctx: Ctx) -> None:
    """Act for whoever's timer ran out, as E2 says."""
    state = ctx.state
    if state.vote_deadline >= 0 and state.vote_deadline <= state.clock:
        ctx.emit(PauseRejected(PauseRejection.TIMEOUT))  # E5: silence is no
        return
    if state.resume_at >= 0 and state.resume_at <= state.clock:
        expiry = state.expiry_at_resume  # read first: the resume clears it
        ctx.emit(GameResumed(state.clock - state.paused_at))
        auctions_put_off(ctx, expiry)
        return
    phase = state.phase
    actor = state.actor
    if phase is Phase.AUCTION:  # A1: no bid in time is a pass
        ctx.emit(TimedOut(actor, TimeoutKind.BID))
        do_bid(ctx, auctions.PassBid(actor))
        return
    if phase is Phase.TRADE:
        trade = state.trade
        assert trade is not None
        ctx.emit(TimedOut(actor, TimeoutKind.TRADE))
        do_decline_trade(ctx, DeclineTrade(actor, trade.trade_id))
        return
    if phase is Phase.PAYMENT and state.payments[0].deadline >= 0:
        ctx.emit(TimedOut(actor, TimeoutKind.DEBT))
        _liquidate_and_pay(ctx, actor)
        return
    seat = state.current
    if not state.timed_out:
        missed = state.missed[seat] + 1
        ctx.emit(TurnTimedOut(seat, missed))
        if missed >= state.config.clock.missed_turns_limit:  # E2: three in a row
            bankrupt(ctx, seat, BANK, BankruptCause.TIMEOUT)
            return
    _default_action(ctx, seat)


def _default_action(ctx: Ctx, seat: int) -> None:
    """E2: what the game does for a player out of time."""
    state = ctx.state
    phase = state.phase
    if phase is Phase.PRE_ROLL:
        do_roll(ctx, Roll(seat))
    elif phase is Phase.BUY:
        do_decline(ctx, DeclineProperty(seat))
    elif phase is Phase.PAYMENT:
        _liquidate_and_pay(ctx, state.payments[0].debtor)  # the debtor's assets, whoever's turn it is
    elif phase is Phase.CASINO:
        do_decline_bet(ctx, casino.DeclineBet(seat))
    elif phase is Phase.CHOICE:
        d1, d2 = state.dice
        if state.choice == "bus":  # X6: time-out takes the sum
            do_bus(ctx, ChooseBusMove(seat, d1 + d2))
        elif state.choice == "triple":  # decision: time-out moves by the three dice
            triple_timed_out(ctx, seat)
        else:  # decision: time-out demolishes on the opponent's most built square
            targets = demolition_targets(state, seat)
            best = max(targets, key=lambda sq: (state.buildings[sq], -sq))
            do_demolish(ctx, Demolish(seat, best))
    else:
        end_turn(ctx)


def _liquidate_and_pay(ctx: Ctx, seat: int) -> None:
    """E2 (decision): sell and mortgage, cheapest first, until the debt is covered; else bankruptcy."""
    state = ctx.state
    due = state.payments[0]
    cfg = state.config
    board = cfg.board
    while state.players[seat].cash < due.amount:
        built = [sq for sq in owned(state, seat) if state.buildings[sq]]
        if built:
            cost = min(board.squares[sq].house_cost for sq in built)
            cheapest = [sq for sq in built if board.squares[sq].house_cost == cost]
            do_sell(ctx, SellBuilding(seat, max(cheapest, key=lambda sq: (state.buildings[sq], -sq))))
            continue
        free = [sq for sq in owned(state, seat) if state.mortgaged_round[sq] < 0]
        if not free:
            bankrupt(ctx, seat, due.creditor)
            return
        do_mortgage(ctx, Mortgage(seat, min(free, key=lambda sq: (board.squares[sq].mortgage_value, sq))))
    do_pay(ctx, Pay(seat))


# -- E5: pauses -----------------------------------------------------------------------


def _check_request_pause(state: TableState, cmd: RequestPause) -> None:
    active(state, cmd.seat)
    if state.paused or state.vote_deadline >= 0:
        raise RuleViolation("E5", "a pause is already asked for or on")


def _do_request_pause(ctx: Ctx, cmd: RequestPause) -> None:
    ctx.emit(PauseRequested(cmd.seat))
    pause_if_agreed(ctx)


def _check_vote(state: TableState, cmd: VotePause) -> None:
    active(state, cmd.seat)
    if state.vote_deadline < 0:
        raise RuleViolation("E5", "no pause vote is open")
    if cmd.seat in state.pause_votes:
        raise RuleViolation("E5", "you have already voted")
    if type(getattr(cmd, "yes")) is not bool:  # noqa: B009  # untyped read: see _check_tick
        raise RuleViolation("E5", "a vote is yes or no")


def _do_vote(ctx: Ctx, cmd: VotePause) -> None:
    ctx.emit(PauseVoted(cmd.seat, cmd.yes))
    if not cmd.yes:
        ctx.emit(PauseRejected(PauseRejection.VOTE))
        return
    pause_if_agreed(ctx)


def pause_if_agreed(ctx: Ctx) -> None:
    state = ctx.state
    if all(s in state.pause_votes for s in state.active_seats):  # E5: unanimous
        ctx.emit(GamePaused())


def _check_back(state: TableState, cmd: ConfirmBack) -> None:
    active(state, cmd.seat)
    if not state.paused or state.resume_at >= 0:
        raise RuleViolation("E5", "the game is not waiting for players to come back")
    if cmd.seat in state.back:
        raise RuleViolation("E5", "you have already confirmed")


def _do_back(ctx: Ctx, cmd: ConfirmBack) -> None:
    ctx.emit(BackConfirmed(cmd.seat))
    resume_if_back(ctx)


def resume_if_back(ctx: Ctx) -> None:
    state = ctx.state
    if all(s in state.back for s in state.active_seats):  # E5: everyone still playing is back
        ctx.emit(ResumeScheduled(state.clock + state.config.clock.resume_countdown_seconds * 1000))


# -- event appliers ---------------------------------------------------------------------


def _ev_clock(s: TableState, e: ClockAdvanced) -> None:
    s.clock = e.now


def _ev_turn_timed_out(s: TableState, e: TurnTimedOut) -> None:
    s.timed_out = True
    s.missed[e.seat] = e.missed


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
    s.expiry_at_resume = False
    s.resume_at = -1
    s.back = []
    s.paused_total += e.paused_ms
    s.turn_deadline += e.paused_ms
    s.bid_deadline += e.paused_ms
    for due in s.payments:
        if due.deadline >= 0:
            due.deadline += e.paused_ms


COMMANDS: dict[type, tuple[CheckFn, EffectFn]] = {
    Tick: (_check_tick, _do_tick),
    RequestPause: (_check_request_pause, _do_request_pause),
    VotePause: (_check_vote, _do_vote),
    ConfirmBack: (_check_back, _do_back),
}

EVENTS: dict[type, ApplyFn] = {
    ClockAdvanced: _ev_clock,
    TurnTimedOut: _ev_turn_timed_out,
    TimedOut: nothing,
    PauseRequested: _ev_pause_requested,
    PauseVoted: _ev_pause_voted,
    PauseRejected: _ev_pause_rejected,
    GamePaused: _ev_paused,
    BackConfirmed: _ev_back,
    ResumeScheduled: _ev_resume_scheduled,
    GameResumed: _ev_resumed,
}
