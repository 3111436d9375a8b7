"""The auction service's pure helpers: moves, time-outs, withdrawals, views, a move asked again, and
its reading of the table's signals (no servers)."""

from __future__ import annotations

from typing import Any

import pytest

from engine import BANK, Bid, GameEnded, PassBid, PlayerBankrupt, RuleViolation
from engine.auction import AuctionLimitsChanged, AuctionStarted
from engine.reasons import AuctionReason
from engine.state import AuctionState
from monopoly.v1 import common_pb2
from servicekit.wire import envelope
from services.auction.auctions import (
    bid_window_ms,
    limits_changed,
    made_already,
    new_row,
    paused,
    play,
    resumed,
    view,
    withdrawn,
)
from services.auction.handlers import RELEVANT, handle_batch

STARTED = AuctionStarted(7, 6, "declined", (1, 2, 0), 1000, 100, -1, (5000, 1500, 9000), 20_000)
T0 = 1_700_000_000_000


def row():  # type: ignore[no-untyped-def]
    return new_row("t1", 42, STARTED, T0, 100)


def test_A1_bid_window_is_game_time_over_the_tables_clock_scale() -> None:
    assert bid_window_ms(20_000, 1) == 20_000
    assert bid_window_ms(20_000, 100) == 200
    assert bid_window_ms(20_000, 3) == 6667  # rounded up: never early
    assert bid_window_ms(20_000, 0) == 20_000


def test_A1_an_auction_opens_with_the_first_bidders_deadline_from_the_events_wall_time() -> None:
    r = row()
    assert (r.table_id, r.auction_id, r.status, r.started_seq) == ("t1", 7, "open", 42)
    assert r.state.bidder == 1 and r.state.min_bid == 1000
    assert r.deadline_unix_ms == T0 + 200
    assert r.limits == (5000, 1500, 9000)


def test_A1_an_internal_auction_is_not_the_services() -> None:
    internal = AuctionStarted(7, 6, "declined", (1, 2), 1000, 100)
    with pytest.raises(ValueError):
        new_row("t1", 1, internal, T0, 1)


def test_A1_bid_moves_the_turn_and_resets_the_deadline_without_touching_the_old_row() -> None:
    r = row()
    new, move, facts = play(r, Bid(1, 1200), T0 + 50)
    assert move == (1, "bid", 1200)
    assert [f.type for f in facts] == ["bid"]
    assert facts[0].event_id == "t1:7:1" and facts[0].amount == 1200
    assert new.state.high_bidder == 1 and new.state.bidder == 2 and new.state.min_bid == 1300
    assert new.deadline_unix_ms == T0 + 50 + 200
    assert (new.version, new.moves) == (1, 1)
    assert r.state.high_bidder == BANK and r.version == 0  # the committed row is untouched


def test_A1_wrong_bidder_and_low_bid_are_refused_A3_above_the_limit_too() -> None:
    r = row()
    with pytest.raises(RuleViolation) as exc:
        play(r, Bid(2, 1000), T0)
    assert exc.value.rule == "A1"
    with pytest.raises(RuleViolation) as exc:
        play(r, Bid(1, 999), T0)
    assert exc.value.rule == "A1"
    r2, _, _ = play(r, Bid(1, 1000), T0)
    with pytest.raises(RuleViolation) as exc:
        play(r2, Bid(2, 1600), T0)  # seat 2 could raise 1,500 at most
    assert exc.value.rule == "A3"


def test_A2_a_hasbro_auction_refuses_a_low_bid_with_A2() -> None:
    """The service knows the rule from the table's AuctionStarted (`bid_rule`), not from its numbers."""
    started = AuctionStarted(3, 39, "declined", (1, 2, 0), 10, 1, -1, (1500, 1500, 1500), 20_000, "A2")
    r = new_row("t2", 9, started, T0, 1)
    for bid in (Bid(1, 9), Bid(2, 10)):  # under $10; not this bidder's turn
        with pytest.raises(RuleViolation) as exc:
            play(r, bid, T0)
        assert exc.value.rule == "A2"
    r2, _, _ = play(r, Bid(1, 10), T0)
    with pytest.raises(RuleViolation) as exc:
        play(r2, Bid(2, 10), T0)  # under +$1
    assert exc.value.rule == "A2"


def test_A1_last_pass_settles_to_the_high_bidder() -> None:
    r, _, _ = play(row(), Bid(1, 1100), T0)
    r, _, facts = play(r, PassBid(2), T0)
    assert [f.type for f in facts] == ["passed"]
    r, move, facts = play(r, PassBid(0), T0, timed_out=True)
    assert move == (0, "timeout", 0)
    assert [f.type for f in facts] == ["timed_out", "settled"]
    settled = facts[-1]
    assert (settled.winner, settled.price, settled.event_id) == (1, 1100, "t1:7:4")
    assert (r.status, r.winner, r.price, r.closed_by, r.deadline_unix_ms) == ("settled", 1, 1100, "service", 0)
    v = view(r)
    assert (v.status, v.bidder, v.winner, v.price, v.moves) == ("settled", BANK, 1, 1100, 3)


def test_A1_nobody_bids_settles_unsold() -> None:
    r = row()
    for seat in (1, 2):
        r, _, _ = play(r, PassBid(seat), T0)
    r, _, facts = play(r, PassBid(0), T0)
    assert [f.type for f in facts] == ["passed", "settled"]
    assert (facts[-1].winner, facts[-1].price) == (BANK, 0)


def test_D2_a_bankrupt_bidder_leaves_and_the_high_bidder_alone_wins() -> None:
    r, _, _ = play(row(), Bid(1, 1100), T0)  # seat 2 bids now
    r, _, _ = play(r, PassBid(2), T0)  # seat 0 bids now
    change = withdrawn(r, 0, T0 + 5)
    assert change is not None
    new, facts = change
    assert [f.type for f in facts] == ["settled"] and (facts[0].winner, facts[0].price) == (1, 1100)
    assert new.status == "settled"


def test_D2_a_bankrupt_current_bidder_passes_the_turn_on() -> None:
    r = row()
    change = withdrawn(r, 1, T0 + 5)
    assert change is not None
    new, facts = change
    assert facts == [] and new.state.bidder == 2 and new.deadline_unix_ms == T0 + 5 + 200
    assert withdrawn(new, 1, T0 + 6) is None  # again: nothing changes
    assert withdrawn(r, 3, T0) is None  # not a bidder


def test_D2_the_last_bidder_leaving_settles_it_unsold_here() -> None:
    r = row()
    r, _ = withdrawn(r, 1, T0) or (r, [])
    r, _ = withdrawn(r, 2, T0) or (r, [])
    change = withdrawn(r, 0, T0)
    assert change is not None
    new, facts = change
    assert [f.type for f in facts] == ["settled"] and (facts[0].winner, facts[0].price) == (BANK, 0)
    assert new.status == "settled"


def test_R3_the_last_live_bidder_leaving_after_the_others_passed_settles_it_at_once() -> None:
    """The table never sees the passes made here, so it still counts those bidders and would not
    settle: the service does, instead of waiting out the leaver's 20 s on a seat no longer playing."""
    r = row()  # bidders 1, 2, 0; seat 1 to bid
    r, _, _ = play(r, PassBid(1), T0)
    r, _, _ = play(r, PassBid(2), T0)
    change = withdrawn(r, 0, T0 + 5)
    assert change is not None
    new, facts = change
    assert [f.type for f in facts] == ["settled"] and (facts[0].winner, facts[0].price) == (BANK, 0)
    assert new.status == "settled"


def test_E5_a_paused_game_stops_the_bidders_clock_and_refuses_bids_until_it_resumes() -> None:
    r = row()  # deadline T0 + 200, opened at table seq 41
    p = paused(r, 60, T0 + 150)
    assert p is not None and p.paused_left_ms == 50 and p.deadline_unix_ms == 0 and p.version == 1
    assert p.pause_seq == 60 and view(p).deadline_unix_ms == 0
    assert paused(p, 60, T0 + 160) is None  # paused already: a redelivery changes nothing
    with pytest.raises(RuleViolation) as exc:
        play(p, Bid(1, 1000), T0 + 170)
    assert exc.value.rule == "E5"
    back = resumed(p, 64, T0 + 10_000)
    assert back is not None and back.paused_left_ms is None and back.deadline_unix_ms == T0 + 10_050
    assert resumed(back, 64, T0 + 10_001) is None
    new, _, _ = play(back, Bid(1, 1000), T0 + 10_010)
    assert new.state.high_bidder == 1
    overdue = paused(r, 60, T0 + 900)
    assert overdue is not None and overdue.paused_left_ms == 0  # the time had run out: it fires on resume


def test_E5_a_late_copy_of_an_older_pause_leaves_the_running_clock_alone() -> None:
    """NATS lost the ack of GamePaused with a connection, and JetStream delivers it again after the game
    resumed: the bidder's clock must keep running (a paused auction has no timer, and the table keeps
    none for a delegated auction: the game would stand still for good)."""
    r = row()
    p = paused(r, 60, T0 + 150)
    assert p is not None
    back = resumed(p, 64, T0 + 10_000)
    assert back is not None
    assert paused(back, 60, T0 + 40_000) is None  # the late copy
    assert resumed(r, 30, T0 + 1) is None  # a resume with no pause: nothing to resume
    assert paused(r, 30, T0 + 100) is None  # a pause before the auction opened (seq 41)
    again = paused(back, 70, T0 + 10_020)  # a new pause still stops it
    assert again is not None and again.paused_left_ms == 30 and again.pause_seq == 70


def test_A3_new_limits_from_the_table_hold_the_next_bids_and_an_older_copy_changes_nothing() -> None:
    r = row()
    r1, _, _ = play(r, Bid(1, 1000), T0)
    with pytest.raises(RuleViolation) as exc:
        play(r1, Bid(2, 1600), T0)  # seat 2 could raise 1,500 when the auction opened
    assert exc.value.rule == "A3"
    changed = limits_changed(r1, 50, AuctionLimitsChanged(7, (4000, 2500, 9000)))  # a trade paid seat 2
    assert changed is not None
    assert changed.limits == changed.state.limits == (4000, 2500, 9000)
    assert (changed.limits_seq, changed.version) == (50, r1.version + 1)
    new, _, _ = play(changed, Bid(2, 1600), T0)
    assert new.state.high_bidder == 2
    assert limits_changed(changed, 50, AuctionLimitsChanged(7, (1, 1, 1))) is None  # redelivered
    assert limits_changed(changed, 45, AuctionLimitsChanged(7, (1, 1, 1))) is None  # older than those held
    assert limits_changed(r1, 41, AuctionLimitsChanged(7, (1, 1, 1))) is None  # before the auction opened
    assert limits_changed(r1, 50, AuctionLimitsChanged(6, (1, 1, 1))) is None  # another auction's


async def test_A3_the_tables_new_limits_reach_the_auction_with_their_seq() -> None:
    auctions = Recorder()
    await handle_batch(auctions, batch(AuctionLimitsChanged(7, (1, 2, 3))))  # type: ignore[arg-type]
    assert auctions.calls == [("change_limits", "t1", 40, AuctionLimitsChanged(7, (1, 2, 3)))]


def test_only_auction_related_table_events_are_decoded() -> None:
    expected = {"AuctionStarted", "AuctionLimitsChanged", "AuctionSettled", "PlayerBankrupt", "GamePaused"}
    expected |= {"GameResumed", "GameEnded"}
    assert expected == RELEVANT
    assert common_pb2.EventBatch().events == []


# -- a move asked again after its answer was lost (A1) --------------------------------------


def auction(high_bidder: int = -1, high_bid: int = 0, out: tuple[bool, ...] = (False, False, False)) -> AuctionState:
    return AuctionState(
        1, 5, AuctionReason.DECLINED, [0, 1, 2], list(out), 0, 10, 10, high_bid=high_bid, high_bidder=high_bidder
    )


def test_A1_the_standing_high_bid_asked_again_is_made_already() -> None:
    assert made_already(auction(high_bidder=1, high_bid=120), Bid(1, 120))


def test_A1_another_amount_or_another_bidder_is_a_new_bid() -> None:
    state = auction(high_bidder=1, high_bid=120)
    assert not made_already(state, Bid(1, 130))
    assert not made_already(state, Bid(2, 120))
    assert not made_already(auction(), Bid(0, 0))  # no bid yet: nobody's bid stands


def test_A1_a_pass_of_a_bidder_out_is_made_already() -> None:
    state = auction(out=(False, True, False))
    assert made_already(state, PassBid(1))
    assert not made_already(state, PassBid(0))
    assert not made_already(state, PassBid(7))  # not a bidder


# -- the table's signals: a bankruptcy that ends the game (D5) --------------------------------


class Recorder:
    """The calls `handle_batch` makes on the service's auctions, in order."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    async def withdraw(self, table_id: str, seat: int) -> None:
        self.calls.append(("withdraw", table_id, seat))

    async def game_ended(self, table_id: str) -> None:
        self.calls.append(("game_ended", table_id))

    async def change_limits(self, table_id: str, seq: int, changed: AuctionLimitsChanged) -> None:
        self.calls.append(("change_limits", table_id, seq, changed))


def batch(*events: Any) -> bytes:
    return common_pb2.EventBatch(
        events=[envelope("t1", 40 + i, e, 0, 1, 0) for i, e in enumerate(events)]
    ).SerializeToString()


async def test_D5_a_bankruptcy_that_ends_the_game_withdraws_nobody() -> None:
    auctions = Recorder()
    await handle_batch(auctions, batch(PlayerBankrupt(2, -1, 2), GameEnded(0, (1, 3, 2), "last_player")))  # type: ignore[arg-type]
    assert auctions.calls == [("game_ended", "t1")]


async def test_A1_a_bankruptcy_while_the_game_goes_on_takes_the_bidder_out() -> None:
    auctions = Recorder()
    await handle_batch(auctions, batch(PlayerBankrupt(2, -1, 3)))  # type: ignore[arg-type]
    assert auctions.calls == [("withdraw", "t1", 2)]
