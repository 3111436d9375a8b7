"""E5: pausing a table (vote, freeze, come back, countdown) and its effect on game time (E3, E6)."""

from __future__ import annotations

import pytest

from engine import (
    AuctionStarted,
    BackConfirmed,
    BankPaid,
    Bid,
    BidPassed,
    ClockAdvanced,
    Command,
    ConfirmBack,
    DeclineProperty,
    EndTurn,
    GamePaused,
    GameResumed,
    PassBid,
    PauseRejected,
    PauseRequested,
    PauseVoted,
    Pay,
    Phase,
    ProposeTrade,
    RequestPause,
    ResumeScheduled,
    Roll,
    RuleViolation,
    SettleAuction,
    Surrender,
    Tick,
    TimedOut,
    TurnTimedOut,
    classic,
    decide,
    legal_commands,
    next_deadline,
    pause_commands,
)
from engine import VotePause as Vote
from engine.codec import state_to_data
from engine.trade import ExecuteTrade

from .helpers import Table, give, roll_onto
from .test_clock import MIN, SALARY, find_seed, not_doubles, of, roll_to, set_cash


def refused(t: Table, command: Command, rule: str = "E5") -> None:
    before = state_to_data(t.state)
    n = len(t.events)
    with pytest.raises(RuleViolation) as exc:
        t.do(command)
    assert exc.value.rule == rule, exc.value
    assert state_to_data(t.state) == before
    assert len(t.events) == n


def pause(t: Table, asker: int | None = None) -> None:
    """Every active player agrees to pause now."""
    seats = t.state.active_seats
    asker = seats[0] if asker is None else asker
    t.do(RequestPause(asker))
    for seat in seats:
        if seat != asker:
            t.do(Vote(seat, True))
    assert t.state.paused


def come_back(t: Table) -> int:
    """Every active player confirms; returns when play resumes (the end of the countdown)."""
    for seat in t.state.active_seats:
        t.do(ConfirmBack(seat))
    return t.state.resume_at


# -- the vote ------------------------------------------------------------------------------


def test_E5_pause_needs_every_active_players_yes() -> None:
    t = Table(players=4, seed=1)
    a, b, c, d = t.state.order
    t.do(Tick(5_000))
    assert t.do(RequestPause(c)) == [PauseRequested(c)]  # any player may ask, not only the one to move
    assert t.state.vote_deadline == 35_000
    assert not t.state.paused and t.state.phase is Phase.PRE_ROLL
    assert t.do(Vote(a, True)) == [PauseVoted(a, True)]
    assert t.do(Vote(d, True)) == [PauseVoted(d, True)]
    assert not t.state.paused
    assert t.do(Vote(b, True)) == [PauseVoted(b, True), GamePaused()]
    assert t.state.paused and t.state.phase is Phase.PAUSED
    assert t.state.vote_deadline == -1
    assert t.replay_matches()


def test_E5_silence_is_no_the_vote_times_out_after_30_s() -> None:
    t = Table(players=3, seed=1)
    a, b, c = t.state.order
    t.do(Tick(10_000))
    t.do(RequestPause(b))
    t.do(Vote(a, True))  # c says nothing
    assert t.do(Tick(39_999)) == [ClockAdvanced(39_999)]
    assert t.do(Tick(40_000)) == [ClockAdvanced(40_000), PauseRejected("timeout")]
    assert not t.state.paused and t.state.vote_deadline == -1
    refused(t, Vote(c, True))  # too late: no vote is open
    # the table plays on; a new request may follow
    t.do(RequestPause(c))
    assert t.state.vote_deadline == 70_000
    assert t.replay_matches()


def test_E5_one_no_rejects_the_pause() -> None:
    t = Table(players=4, seed=1)
    a, b, c, d = t.state.order
    t.do(RequestPause(a))
    t.do(Vote(b, True))
    assert t.do(Vote(c, False)) == [PauseVoted(c, False), PauseRejected("vote")]
    assert not t.state.paused and t.state.vote_deadline == -1
    refused(t, Vote(d, True))
    assert t.replay_matches()


def test_E5_vote_rules_one_vote_each_one_request_at_a_time() -> None:
    t = Table(players=3, seed=1)
    a, b, _c = t.state.order
    refused(t, Vote(a, True))  # nothing to vote on
    t.do(RequestPause(a))
    refused(t, RequestPause(b))  # already asked
    refused(t, Vote(a, True))  # the asker's request is their yes
    t.do(Vote(b, True))
    refused(t, Vote(b, False))  # already voted
    refused(t, Vote(7, True), rule="G1")
    assert t.replay_matches()


def test_E5_only_active_players_ask_and_vote_and_only_they_are_waited_for() -> None:
    t = Table(players=3, seed=1)
    a, b, c = t.state.order
    t.do(Surrender(a))
    assert t.state.players[a].bankrupt
    refused(t, RequestPause(a), rule="G1")
    t.do(RequestPause(b))
    refused(t, Vote(a, True), rule="G1")
    assert t.do(Vote(c, True)) == [PauseVoted(c, True), GamePaused()]
    assert t.replay_matches()


def test_E5_the_game_runs_on_while_the_vote_is_open() -> None:
    t = Table(players=3, seed=1)
    a, b, _c = t.state.order
    t.do(Tick(60_000))
    t.do(RequestPause(b))
    events = t.do(Tick(75_000))  # not paused yet: the turn timer still runs
    assert TurnTimedOut(a, 1) in events
    assert t.state.vote_deadline == 90_000
    assert t.replay_matches()


def test_E5_pause_agreed_by_everyone_still_playing_after_a_player_leaves() -> None:
    """All active players must agree: once the only silent player is out of the game, everyone
    left has said yes, so the table pauses (it must not be rejected for 'silence')."""
    t = Table(players=3, seed=1)
    a, b, c = t.state.order
    t.do(RequestPause(b))
    t.do(Vote(c, True))
    t.do(Surrender(a))  # a never voted and has left the game
    assert t.state.active_seats == [b, c]
    t.do(Tick(30_000))
    assert not of(t.events, PauseRejected)
    assert t.state.paused


# -- while paused ---------------------------------------------------------------------------


def test_E5_a_paused_table_refuses_game_commands_with_E5() -> None:
    t = find_seed(4, classic(), lambda s, ev: bool(of(ev, AuctionStarted)) and not_doubles(ev))
    a, b, c, d = t.state.order
    t.do(Roll(a))
    assert t.state.phase is Phase.BUY
    pause(t, asker=c)
    for command in (
        DeclineProperty(a),
        Roll(a),
        EndTurn(a),
        Pay(a),
        Surrender(a),
        Surrender(b),
        ProposeTrade(a, b, give_cash=100),
        RequestPause(b),
    ):
        refused(t, command)
    for seat in (a, b, c, d):
        assert legal_commands(t.state, seat) == [ConfirmBack(seat)]
        assert pause_commands(t.state, seat) == []
    assert t.replay_matches()


def test_E5_a_paused_table_freezes_the_turn_timer() -> None:
    t = Table(players=3, seed=1)
    a = t.state.current
    t.do(Tick(30_000))  # 45 s of the turn left
    pause(t)
    assert next_deadline(t.state) is None
    # ten minutes pass: nothing times out
    for now in (75_000, 200_000, 630_000):
        assert t.do(Tick(now)) == [ClockAdvanced(now)]
    assert t.state.turn_deadline == 75_000  # unchanged until play resumes
    at = come_back(t)
    assert at == 633_000
    assert t.do(Tick(at)) == [ClockAdvanced(at), GameResumed(603_000)]
    assert t.state.turn_deadline - t.state.clock == 45_000
    assert t.do(Tick(at + 44_999)) == [ClockAdvanced(at + 44_999)]
    events = t.do(Tick(at + 45_000))
    assert events[1] == TurnTimedOut(a, 1)
    assert t.replay_matches()


def test_E5_a_paused_table_freezes_the_bid_timer() -> None:
    t = find_seed(4, classic(), lambda s, ev: bool(of(ev, AuctionStarted)) and not_doubles(ev))
    a = t.state.current
    t.do(Roll(a))
    (started,) = of(t.do(DeclineProperty(a)), AuctionStarted)
    b1, b2, _b3 = started.bidders
    t.do(Tick(5_000))
    t.do(Bid(b1, started.start_price))  # b2 has until 25 s
    t.do(Tick(15_000))
    pause(t)
    t.do(Tick(100_000))
    refused(t, PassBid(b2))
    assert t.state.auction is not None and t.state.auction.bidder == b2
    at = come_back(t)
    assert t.do(Tick(at)) == [ClockAdvanced(at), GameResumed(at - 15_000)]
    assert t.state.bid_deadline - t.state.clock == 10_000
    assert t.do(Tick(at + 9_999)) == [ClockAdvanced(at + 9_999)]
    events = t.do(Tick(at + 10_000))
    assert events[1:] == [TimedOut(b2, "bid"), BidPassed(started.auction_id, b2)]
    assert t.replay_matches()


def test_E5_a_paused_table_freezes_the_debt_timer() -> None:
    t = Table(players=3, seed=2)
    seat = t.state.current
    give(t.state, seat, 5)
    set_cash(t, seat, 1_000)
    t.do(Tick(10_000))
    roll_to(t, 4)  # income tax $2,000 with $1,000 cash: 60 s of debt resolution
    assert t.state.payments[0].deadline == 70_000
    t.do(Tick(50_000))  # 20 s left
    pause(t)
    t.do(Tick(500_000))
    assert t.state.phase is Phase.PAUSED and t.state.payments
    at = come_back(t)
    t.do(Tick(at))
    assert t.state.payments[0].deadline - t.state.clock == 20_000
    assert t.do(Tick(at + 19_999)) == [ClockAdvanced(at + 19_999)]
    events = t.do(Tick(at + 20_000))
    assert events[1] == TimedOut(seat, "debt")
    assert not t.state.payments


def test_E5_resume_only_when_everyone_is_back_then_a_3_s_countdown() -> None:
    t = Table(players=3, seed=1)
    a, b, c = t.state.order
    t.do(Tick(1_000))
    pause(t)
    refused(t, ConfirmBack(7), rule="G1")
    assert t.do(ConfirmBack(a)) == [BackConfirmed(a)]
    refused(t, ConfirmBack(a))  # once is enough
    assert t.do(ConfirmBack(c)) == [BackConfirmed(c)]
    # b is not back: however long it takes, the table stays paused
    assert t.do(Tick(3_600_000)) == [ClockAdvanced(3_600_000)]
    assert t.state.paused and t.state.resume_at == -1
    assert t.do(ConfirmBack(b)) == [BackConfirmed(b), ResumeScheduled(3_603_000)]
    # the countdown: still paused, nothing to confirm any more
    refused(t, Roll(a))
    refused(t, ConfirmBack(b))
    refused(t, RequestPause(c))
    assert t.state.phase is Phase.PAUSED
    assert t.do(Tick(3_602_999)) == [ClockAdvanced(3_602_999)]
    assert t.do(Tick(3_603_000)) == [ClockAdvanced(3_603_000), GameResumed(3_602_000)]
    assert not t.state.paused and t.state.phase is Phase.PRE_ROLL
    refused(t, ConfirmBack(a))  # not paused
    t.do(Roll(a))
    assert t.replay_matches()


def test_E5_game_minutes_exclude_paused_time() -> None:
    t = Table(players=3, seed=1)
    t.do(Tick(50_000))
    assert (t.state.game_ms, t.state.minute) == (50_000, 1)
    pause(t)
    t.do(Tick(20 * MIN))
    assert t.state.game_ms == 50_000  # frozen while paused
    assert t.state.minute == 1
    at = come_back(t)
    t.do(Tick(at))
    assert t.state.paused_total == at - 50_000
    assert t.state.game_ms == 50_000
    t.do(Tick(at + 20_000))
    assert (t.state.game_ms, t.state.minute) == (70_000, 2)
    # a second pause adds up
    pause(t)
    t.do(Tick(at + 80_000))
    at2 = come_back(t)
    t.do(Tick(at2))
    assert t.state.game_ms == 70_000
    assert t.replay_matches()


def test_E5_E3_paused_time_does_not_bring_the_salary_stop_closer() -> None:
    t = Table(players=3, seed=4)
    t.do(Tick(60_000))
    pause(t)
    t.do(Tick(50 * MIN))  # 50 minutes on the clock, but the table was paused for 49 of them
    at = come_back(t)
    t.do(Tick(at))
    assert t.state.minute == 2
    assert t.replay_matches()
    seat = t.state.current
    events = roll_to(t, 1)  # passes Start
    assert BankPaid(seat, SALARY, "salary") in events


def test_E5_E6_deciding_a_tick_while_paused_changes_nothing() -> None:
    t = Table(players=3, seed=1)
    pause(t)
    come_back(t)
    before = state_to_data(t.state)
    events = decide(t.state, Tick(10_000))
    # play resumes when the 3 s countdown ends, not when the late tick arrives
    assert events == [ClockAdvanced(3_000), GameResumed(3_000), ClockAdvanced(10_000)]
    assert state_to_data(t.state) == before
    assert t.state.paused


def test_E5_the_bankrupt_cannot_block_the_return() -> None:
    t = Table(players=3, seed=1)
    a, b, c = t.state.order
    t.do(Surrender(a))
    pause(t)
    t.do(ConfirmBack(b))
    refused(t, ConfirmBack(a), rule="G1")
    assert t.do(ConfirmBack(c))[-1] == ResumeScheduled(t.state.clock + 3_000)


def test_E5_an_auction_services_result_is_applied_while_paused() -> None:
    """The service stops its clock at the pause and takes no bid meanwhile, so a result arriving then was
    decided before it: refused, it would be lost. A trade's execution, asked while the counterparty
    waits, is refused like a player's command."""
    t = Table(players=3, seed=1, config=classic(external=("auction", "trade")))
    seller = t.state.current
    roll_onto(t, 39)
    (started,) = of(t.do(DeclineProperty(seller)), AuctionStarted)
    pause(t)
    winner = started.bidders[0]
    t.do(SettleAuction(-1, started.auction_id, winner, started.start_price))
    assert t.state.auction is None and t.state.owner[39] == winner
    other = started.bidders[1]
    refused(t, ExecuteTrade(seller, 1, other, t.state.turn_no, give_cash=10))
