"""Online clock rules E1-E4 and E6 (timers, time-outs, salary stop, rent tax, the table clock).

Time enters the engine only as `Tick(now)` commands, `now` in game milliseconds
since the table was created. Tests that need the clock far on reach it by
playing quick turns just before each turn timer runs out (`idle_until`), so the
clock moves without anybody timing out.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest

from engine import (
    BANK,
    AcceptTrade,
    AuctionSettled,
    AuctionStarted,
    BankPaid,
    Bid,
    BidPassed,
    BuildingSold,
    ChooseBusMove,
    ChooseSquare,
    ClockAdvanced,
    ClockRules,
    Command,
    DeclineBet,
    DeclineProperty,
    Demolish,
    DiceRolled,
    EndTurn,
    Event,
    GameEnded,
    Mortgage,
    PassBid,
    Pay,
    PaymentDue,
    PaymentMade,
    Phase,
    PlayerBankrupt,
    PropertyMortgaged,
    ProposeTrade,
    PurchaseDeclined,
    PurchaseOffered,
    Roll,
    RuleViolation,
    Scenario,
    Surrender,
    TableConfig,
    TableState,
    Tick,
    TimedOut,
    TurnEnded,
    TurnStarted,
    TurnTimedOut,
    apply,
    classic,
    decide,
    legal_commands,
    next_deadline,
    preset,
    rent,
    rent_tax_percent,
    replay,
    salary_paid,
)
from engine.codec import state_to_data
from engine.reasons import PaymentReason

from .helpers import Table, force_dice, give, place, set_cash

MIN = 60_000  # one game minute in ms
SALARY = 2000
BONUS = 1000


# -- helpers ---------------------------------------------------------------------------


def of(events: list[Event], cls: type) -> list[Any]:
    return [e for e in events if isinstance(e, cls)]


def names(events: list[Event]) -> list[str]:
    return [type(e).__name__ for e in events]


def without_clock(state: TableState) -> dict[str, Any]:
    data = state_to_data(state)
    data.pop("clock")
    data.pop("seq")
    return data


_QUICK = (EndTurn, DeclineBet, PassBid, DeclineProperty, Pay, Roll, ChooseBusMove, ChooseSquare, Demolish, Mortgage)


def quick_move(state: TableState, seat: int) -> Command:
    """A fast, harmless move for `seat`: end, pass, decline, pay, roll (never buys or bids)."""
    legal = legal_commands(state, seat)
    for kind in _QUICK:
        for command in legal:
            if type(command) is kind:
                return command
    raise AssertionError(f"no quick move for seat {seat} in {state.phase}: {legal}")


def play_turn(t: Table) -> None:
    """The current player's turn, played at once with quick moves (every other player answers at once too)."""
    turn_no = t.state.turn_no
    while t.state.turn_no == turn_no and not t.state.finished:
        t.do(quick_move(t.state, t.state.actor))


def idle_until(t: Table, ms: int) -> None:
    """Move the clock to `ms` with nobody timing out: each turn is played just before its timer runs out.

    Returns with the current player in the pre-roll phase and the clock at `ms`.
    """
    while True:
        s = t.state
        assert not s.finished, "the game ended while idling"
        assert s.phase is Phase.PRE_ROLL and s.actor == s.current
        if s.turn_deadline > ms:
            if ms > s.clock:
                t.do(Tick(ms))
            return
        t.do(Tick(s.turn_deadline - 1))
        play_turn(t)


def speed_die_active(state: TableState) -> bool:
    start = state.config.speed_die_from_round
    return start is not None and state.round >= start


def roll_to(t: Table, target: int) -> list[Event]:
    """Hand set-up: the current player (out of jail) rolls 1+2 (+1 on the speed die) onto `target`."""
    s = t.state
    seat = s.current
    s.players[seat].in_jail = False
    s.players[seat].jail_turns = 0
    if speed_die_active(s):
        steps = 4
        force_dice(s, 1, 2, 1, 1)  # the third draw is the speed die: face 1
    else:
        steps = 3
        force_dice(s, 1, 2)
    place(s, seat, (target - steps) % 40)
    return t.do(Roll(seat))


def find_seed(players: int, config: TableConfig, predicate: Callable[[TableState, list[Event]], bool]) -> Table:
    """The first table (by seed) whose opening time-out (nobody acts for 75 s) matches `predicate`."""
    for seed in range(1, 500):
        t = Table(players=players, seed=seed, config=config)
        events = decide(t.state, Tick(t.state.turn_deadline))
        if predicate(t.state, events):
            return t
    raise AssertionError("no seed found")


def not_doubles(events: list[Event]) -> bool:
    rolls = of(events, DiceRolled)
    return len(rolls) == 1 and rolls[0].d1 != rolls[0].d2


def drive(t: Table, idle: Callable[[TableState, int], bool], stop: Callable[[TableState], bool]) -> None:
    """Run the table: a seat `idle` says is idle lets its timer run out, every other seat moves at once."""
    for _ in range(5000):
        s = t.state
        if s.finished or stop(s):
            return
        actor = s.actor
        if idle(s, actor) or (s.timed_out and actor == s.current):
            due = next_deadline(s)
            assert due is not None
            t.do(Tick(max(s.clock, due)))
        else:
            t.do(Tick(s.clock + 1000))
            if not s.finished:
                t.do(quick_move(s, s.actor))
    raise AssertionError("the table did not reach the stop condition")


def turns_started(t: Table, seat: int) -> int:
    return sum(1 for e in t.events if isinstance(e, TurnStarted) and e.seat == seat)


# -- E1: timers ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mode", "players", "ms"),
    [("classic", 4, 75_000), ("speed", 4, 45_000), ("duel", 3, 45_000), ("team", 4, 75_000)],
)
def test_E1_turn_timer_per_mode(mode: str, players: int, ms: int) -> None:
    t = Table(players=players, seed=3, config=preset(mode))
    assert isinstance(t.events[-1], TurnStarted)
    assert t.state.turn_deadline - t.state.clock == ms
    # a later turn gets the same time from the moment it starts
    t.do(Tick(12_345))
    play_turn(t)
    assert t.state.clock == 12_345
    assert t.state.turn_deadline - t.state.clock == ms


def test_E1_custom_turn_timer_is_the_hosts_setting() -> None:
    t = Table(players=2, config=preset("custom", turn_seconds=120))
    assert t.state.turn_deadline - t.state.clock == 120_000


def test_E1_tick_just_before_turn_deadline_only_advances_the_clock_tick_at_it_fires() -> None:
    t = Table(players=4, seed=1)
    seat = t.state.current
    before = without_clock(t.state)
    events = t.do(Tick(74_999))
    assert events == [ClockAdvanced(74_999)]
    assert t.state.clock == 74_999
    assert without_clock(t.state) == before
    events = t.do(Tick(75_000))
    assert events[0] == ClockAdvanced(75_000)
    assert events[1] == TurnTimedOut(seat, 1)
    assert t.replay_matches()


def test_E1_the_turn_timer_is_not_restarted_by_rolling() -> None:
    t = find_seed(4, classic(), lambda s, ev: not_doubles(ev))
    seat = t.state.current
    t.do(Tick(30_000))
    t.do(Roll(seat))
    assert t.state.turn_deadline == 75_000
    assert t.replay_matches()


def _two_expired_mortgages_auctioned() -> tuple[TableState, list[Event]]:
    """M3: seat 0's two mortgages of round 1 expire at its turn of round 8; seat 2 wins the first at $600,
    and the second opens while that price is still due (nobody can bid before it is paid)."""
    scenario = Scenario(
        players=("a", "b", "c"),
        mode="classic",
        turn=2,
        round=7,
        owners={0: [1, 3]},
        mortgaged={1: 1, 3: 1},
        positions={2: 5},
        dice=((2, 3),),
    )
    events = scenario.events()
    state = replay(events)
    for command in (Roll(2), EndTurn(2), PassBid(1), Bid(2, 600), PassBid(0)):
        events += apply(state, command)
    assert state.phase is Phase.PAYMENT and state.auction is not None and state.auction.square == 3
    return state, events


def test_E1_A1_a_bidder_gets_20_s_from_when_the_price_due_before_them_is_paid() -> None:
    state, events = _two_expired_mortgages_auctioned()
    events += apply(state, Tick(30_000))  # the winner takes 30 s of their debt time
    events += apply(state, Pay(2))
    assert state.phase is Phase.AUCTION and state.bid_deadline == 50_000
    assert apply(state, Tick(49_999)) == [ClockAdvanced(49_999)]  # not timed out at once
    assert replay([*events, ClockAdvanced(49_999)]) == state


def test_E1_E2_A1_a_price_paid_by_the_time_out_gives_the_next_bidder_their_20_s() -> None:
    state, _ = _two_expired_mortgages_auctioned()
    events = apply(state, Tick(60_000))  # E2 pays for the winner; the first bidder is not timed out with it
    assert events == [
        ClockAdvanced(60_000),
        TimedOut(2, "debt"),
        PaymentMade(2, BANK, 600, PaymentReason.AUCTION, 0, 1),
    ]
    assert state.phase is Phase.AUCTION and state.bid_deadline == 80_000


def test_E1_A1_auction_gives_20_s_per_bid() -> None:
    t = find_seed(4, classic(), lambda s, ev: bool(of(ev, AuctionStarted)) and not_doubles(ev))
    seat = t.state.current
    t.do(Tick(1_000))
    t.do(Roll(seat))
    assert t.state.phase is Phase.BUY
    t.do(Tick(2_000))
    events = t.do(DeclineProperty(seat))
    (started,) = of(events, AuctionStarted)
    assert seat not in started.bidders
    assert t.state.bid_deadline - t.state.clock == 20_000 == t.state.bid_deadline - 2_000
    b1, b2, b3 = started.bidders
    # the first bidder bids after 15 s: the next bidder gets a fresh 20 s
    t.do(Tick(17_000))
    t.do(Bid(b1, started.start_price))
    assert t.state.bid_deadline == 37_000
    assert t.do(Tick(36_999)) == [ClockAdvanced(36_999)]
    events = t.do(Tick(37_000))
    assert events[1:] == [TimedOut(b2, "bid"), BidPassed(started.auction_id, b2)]
    assert t.state.bid_deadline == 57_000
    assert t.state.auction is not None and t.state.auction.bidder == b3
    assert t.replay_matches()


def test_A1_E1_a_bidder_who_timed_out_is_out_of_the_auction() -> None:
    t = find_seed(4, classic(), lambda s, ev: bool(of(ev, AuctionStarted)) and not_doubles(ev))
    seat = t.state.current
    t.do(Roll(seat))
    (started,) = of(t.do(DeclineProperty(seat)), AuctionStarted)
    _b1, b2, b3 = started.bidders
    t.do(Tick(20_000))  # the first bidder said nothing: a pass
    assert t.state.auction is not None and t.state.auction.bidder == b2
    t.do(Bid(b2, started.start_price))
    events = t.do(PassBid(b3))
    # b1 is out: b2's bid stands, the auction is over
    assert AuctionSettled(started.auction_id, started.square, b2, started.start_price) in events
    assert t.state.owner[started.square] == b2
    assert t.replay_matches()


def debtor_on_income_tax(t: Table, cash: int) -> int:
    """Hand set-up: the current player, with `cash`, lands on income tax ($2,000)."""
    seat = t.state.current
    set_cash(t, seat, cash)
    events = roll_to(t, 4)
    assert PaymentDue(seat, BANK, 2000, "tax", square=4) in events
    return seat


def test_E1_D1_debt_resolution_gets_60_s() -> None:
    t = Table(players=3, seed=2)
    seat = t.state.current
    give(t.state, seat, 5)  # a finance company: mortgage value $1,000
    t.do(Tick(10_000))
    debtor_on_income_tax(t, 1500)
    assert t.state.phase is Phase.PAYMENT
    (due,) = t.state.payments
    assert due.deadline - t.state.clock == 60_000
    assert due.deadline == 70_000
    assert t.do(Tick(69_999)) == [ClockAdvanced(69_999)]
    # past the turn deadline (75 s) the debt timer still rules, not the turn timer
    events = t.do(Tick(70_000))
    assert events[1] == TimedOut(seat, "debt")
    assert PropertyMortgaged(seat, 5, 1000) in events
    assert PaymentMade(seat, BANK, 2000, "tax", square=4) in events
    assert t.state.players[seat].cash == 500
    assert not t.state.players[seat].bankrupt


def test_E1_D1_debt_timer_runs_past_the_turn_timer() -> None:
    t = Table(players=3, seed=2)
    seat = t.state.current
    give(t.state, seat, 5)
    t.do(Tick(60_000))
    debtor_on_income_tax(t, 1500)
    assert t.state.payments[0].deadline == 120_000
    # the turn deadline (75 s) passes without effect while the debt is being resolved
    assert t.do(Tick(100_000)) == [ClockAdvanced(100_000)]
    assert t.state.phase is Phase.PAYMENT
    assert of(t.do(Tick(120_000)), TimedOut) == [TimedOut(seat, "debt")]


def test_E1_D1_a_trade_proposed_in_debt_resolution_is_answered_by_the_debt_deadline_with_an_auction_waiting() -> None:
    """A D4 auction's price falls due (A short of it) as the next D4 auction opens: a trade A proposes
    at 55 s is answered within the debt's 60 s, not in a bid's 20 s from the proposal."""
    scenario = Scenario(
        players=("A", "B", "C"),
        mode="hasbro",
        turn="C",
        order=("C", "A", "B"),
        cash={"A": 100, "C": 10},
        owners={"C": ["Mediterranean Ave", "Baltic Ave"], "A": ["Boardwalk"]},
        positions={"C": 36},
        dice=((1, 1),),
    )
    state = scenario.state()
    apply(state, Roll(2))  # C bankrupt to the bank (income tax): D4 auctions of squares 1 and 3
    apply(state, Bid(1, 10))
    apply(state, Bid(0, 150))
    apply(state, PassBid(1))  # A owes $150 with $100; square 3's auction waits behind the payment
    assert state.auction is not None and state.payments[0].debtor == 0
    assert state.payments[0].deadline == 60_000
    apply(state, Tick(55_000))
    apply(state, ProposeTrade(0, 1, give_squares=(39,), take_cash=100))
    assert state.phase is Phase.TRADE
    assert next_deadline(state) == 60_000
    events = apply(state, Tick(60_000))
    assert TimedOut(1, "trade") in events and TimedOut(0, "debt") in events


def test_E1_an_affordable_payment_runs_on_the_turn_timer() -> None:
    t = Table(players=3, seed=2)
    t.do(Tick(10_000))
    debtor_on_income_tax(t, 15_000)
    assert t.state.payments[0].deadline == -1
    assert next_deadline(t.state) == t.state.turn_deadline == 75_000


# -- E2: time-outs ---------------------------------------------------------------------


def test_E2_timeout_declines_the_purchase_and_others_bids_time_out_as_passes() -> None:
    t = find_seed(3, classic(), lambda s, ev: bool(of(ev, AuctionStarted)) and not_doubles(ev))
    seat = t.state.current
    events = t.do(Tick(75_000))
    assert events[:2] == [ClockAdvanced(75_000), TurnTimedOut(seat, 1)]
    (offer,) = of(events, PurchaseOffered)
    assert PurchaseDeclined(seat, offer.square) in events
    (started,) = of(events, AuctionStarted)
    assert started.square == offer.square and seat not in started.bidders
    assert t.state.owner[offer.square] == BANK
    b1, b2 = started.bidders
    assert t.state.bid_deadline == 95_000
    assert t.do(Tick(94_999)) == [ClockAdvanced(94_999)]
    events = t.do(Tick(95_000))
    assert events[1:] == [TimedOut(b1, "bid"), BidPassed(started.auction_id, b1)]
    events = t.do(Tick(115_000))
    assert events[1:3] == [TimedOut(b2, "bid"), BidPassed(started.auction_id, b2)]
    assert AuctionSettled(started.auction_id, offer.square, BANK, 0) in events
    # the timed-out player's turn then ends by itself, and counts as missed
    assert TurnEnded(seat) in events
    assert t.state.current != seat
    assert t.state.owner[offer.square] == BANK
    assert t.state.missed[seat] == 1
    # the bidders' silence in an auction is not a missed turn of theirs
    assert t.state.missed[b1] == t.state.missed[b2] == 0
    assert t.replay_matches()


def test_E2_timeout_pays_what_is_due_and_ends_the_turn() -> None:
    def rolled_into_payment(state: TableState, events: list[Event]) -> bool:
        after = decide(state, Roll(state.current))
        return bool(of(after, PaymentDue)) and not_doubles(after) and not of(after, PurchaseOffered)

    t = find_seed(3, classic(), rolled_into_payment)
    seat = t.state.current
    t.do(Roll(seat))
    (due,) = t.state.payments
    cash = t.state.players[seat].cash
    assert cash >= due.amount
    events = t.do(Tick(75_000))
    assert events[1] == TurnTimedOut(seat, 1)
    assert PaymentMade(due.debtor, due.creditor, due.amount, due.reason, square=due.square) in events
    assert events[-2:] == [TurnEnded(seat), TurnStarted(t.state.current, t.state.round)]
    assert t.state.players[seat].cash == cash - due.amount
    assert t.state.missed[seat] == 1
    assert t.replay_matches()


def test_E2_timeout_in_post_roll_ends_the_turn_and_counts_it_missed() -> None:
    def quiet_roll(state: TableState, events: list[Event]) -> bool:
        twin = state.copy()
        seat = twin.current
        apply(twin, Roll(seat))
        return twin.current == seat and twin.phase is Phase.POST_ROLL

    t = find_seed(3, classic(), quiet_roll)
    seat = t.state.current
    t.do(Tick(20_000))
    t.do(Roll(seat))
    assert t.state.phase is Phase.POST_ROLL
    assert t.do(Tick(74_999)) == [ClockAdvanced(74_999)]
    events = t.do(Tick(75_000))
    assert events[1:3] == [TurnTimedOut(seat, 1), TurnEnded(seat)]
    assert t.state.missed[seat] == 1
    assert t.replay_matches()


def test_E2_three_timed_out_turns_in_a_row_bankrupt_to_the_bank_with_cause_timeout() -> None:
    t = Table(players=3, seed=5)
    lazy = t.state.current
    drive(t, idle=lambda s, seat: seat == lazy, stop=lambda s: s.players[lazy].bankrupt)
    assert turns_started(t, lazy) == 3
    timed = [e for e in t.events if isinstance(e, TurnTimedOut)]
    assert timed == [TurnTimedOut(lazy, 1), TurnTimedOut(lazy, 2), TurnTimedOut(lazy, 3)]
    i = t.events.index(TurnTimedOut(lazy, 3))
    bankrupt = t.events[i + 1]
    assert isinstance(bankrupt, PlayerBankrupt)
    assert (bankrupt.seat, bankrupt.creditor, bankrupt.cause) == (lazy, BANK, "timeout")
    assert bankrupt.place == 3
    assert not any(o == lazy for o in t.state.owner)
    assert not t.state.finished and len(t.state.active_seats) == 2
    assert t.state.current != lazy
    assert t.replay_matches()


def test_E2_a_turn_played_in_time_resets_the_missed_count() -> None:
    t = Table(players=3, seed=5)
    lazy = t.state.current

    def idle(state: TableState, seat: int) -> bool:
        # idle on turns 1, 2, 4, 5 and 6; turn 3 played in time
        return seat == lazy and turns_started(t, lazy) != 3

    drive(t, idle=idle, stop=lambda s: turns_started(t, lazy) == 6 and s.current == lazy)
    assert [e.missed for e in t.events if isinstance(e, TurnTimedOut)] == [1, 2, 1, 2]
    assert not t.state.players[lazy].bankrupt  # 4 time-outs, never three in a row
    drive(t, idle=idle, stop=lambda s: s.players[lazy].bankrupt)
    assert turns_started(t, lazy) == 6
    last = [e for e in t.events if isinstance(e, PlayerBankrupt)]
    assert [(e.seat, e.cause) for e in last] == [(lazy, "timeout")]
    assert t.replay_matches()


def test_E2_debt_timeout_sells_the_cheapest_buildings_first_and_stops_when_covered() -> None:
    t = Table(players=3, seed=2)
    seat = t.state.current
    give(t.state, seat, 1, 3, 37, 39)  # group 1 (building cost $500) and group 8 ($2,000)
    for sq, level in ((1, 2), (3, 2), (37, 1), (39, 1)):
        t.state.buildings[sq] = level
    debtor_on_income_tax(t, 100)
    deadline = t.state.payments[0].deadline
    events = t.do(Tick(deadline))
    assert events[1] == TimedOut(seat, "debt")
    sold = of(events, BuildingSold)
    # four $500 buildings of group 1 raise $2,000; group 8 and mortgages are untouched
    assert [(e.square, e.level, e.refund) for e in sold] == [(1, 1, 500), (3, 1, 500), (1, 0, 500), (3, 0, 500)]
    assert not of(events, PropertyMortgaged)
    assert PaymentMade(seat, BANK, 2000, "tax", square=4) in events
    assert t.state.buildings[37] == t.state.buildings[39] == 1
    assert t.state.players[seat].cash == 100
    assert not t.state.players[seat].bankrupt


def test_E2_debt_timeout_mortgages_the_cheapest_properties_first() -> None:
    t = Table(players=3, seed=2)
    seat = t.state.current
    give(t.state, seat, 1, 3, 5, 12, 39)  # mortgage values 300, 300, 1000, 750, 2000
    debtor_on_income_tax(t, 0)
    events = t.do(Tick(t.state.payments[0].deadline))
    mortgaged = [(e.square, e.amount) for e in of(events, PropertyMortgaged)]
    assert mortgaged == [(1, 300), (3, 300), (12, 750), (5, 1000)]
    assert PaymentMade(seat, BANK, 2000, "tax", square=4) in events
    assert t.state.mortgaged_round[39] == -1
    assert t.state.players[seat].cash == 350
    assert not t.state.players[seat].bankrupt


def test_E2_D2_debt_timeout_goes_bankrupt_only_when_selling_and_mortgaging_cannot_cover() -> None:
    t = Table(players=3, seed=2)
    seat = t.state.current
    other = next(s for s in t.state.active_seats if s != seat)
    give(t.state, seat, 39)  # mortgage value $2,000: the tax can be raised, no bankruptcy yet
    give(t.state, other, 16)
    debtor_on_income_tax(t, 0)
    assert not t.state.players[seat].bankrupt
    # in debt resolution the debtor trades the $2,000 mortgage value away for less
    t.do(ProposeTrade(seat, other, give_squares=(39,), take_cash=200, take_squares=(16,)))
    t.do(AcceptTrade(other, t.state.trade.trade_id if t.state.trade else -1))
    assert t.state.raisable(seat) == 200 + 900 < 2000
    events = t.do(Tick(t.state.payments[0].deadline))
    assert events[1] == TimedOut(seat, "debt")
    assert PropertyMortgaged(seat, 16, 900) in events  # everything was tried first
    (bankrupt,) = of(events, PlayerBankrupt)
    assert (bankrupt.seat, bankrupt.creditor) == (seat, BANK)
    assert not of(events, PaymentMade)
    assert t.state.players[seat].bankrupt


@pytest.mark.parametrize(
    ("mode", "players", "seed"), [("classic", 4, 1), ("classic", 4, 7), ("speed", 4, 2), ("duel", 3, 3)]
)
def test_E2_a_table_nobody_plays_ends_with_every_loser_bankrupt_by_timeout(mode: str, players: int, seed: int) -> None:
    t = Table(players=players, seed=seed, config=preset(mode))
    now = 0
    for _ in range(2000):
        if t.state.finished:
            break
        now += 10_000
        t.do(Tick(now))
    assert t.state.finished
    bankrupt = of(t.events, PlayerBankrupt)
    assert len(bankrupt) == players - 1
    assert all(e.cause == "timeout" and e.creditor == BANK for e in bankrupt)
    for e in bankrupt:
        mine = [x.missed for x in t.events if isinstance(x, TurnTimedOut) and x.seat == e.seat]
        assert mine == [1, 2, 3]
    ended = t.events[-1]
    assert isinstance(ended, GameEnded)
    assert ended.reason == "last_player"
    assert not t.state.players[ended.winner].bankrupt
    assert sorted(ended.places) == list(range(1, players + 1))
    # the last time-out happens at its deadline, within the last tick's 10 s
    assert ended.game_ms == t.state.clock
    assert now - 10_000 < ended.game_ms <= now
    assert ended.scale == 1
    assert t.replay_matches()


# -- E3: salary stops --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mode", "players", "ms", "paid"),
    [
        ("classic", 3, 44 * MIN + 1_000, True),  # minute 45
        ("classic", 3, 45 * MIN - 1, True),  # last ms of minute 45
        ("classic", 3, 45 * MIN, False),  # minute 46: stopped
        ("classic", 3, 46 * MIN + 1_000, False),  # minute 47
        ("speed", 3, 28 * MIN + 1_000, True),  # minute 29
        ("speed", 3, 29 * MIN, False),  # minute 30
        ("duel", 3, 28 * MIN + 1_000, True),
        ("duel", 3, 29 * MIN + 1_000, False),
    ],
)
def test_E3_salary_stops_at_the_stop_minute(mode: str, players: int, ms: int, paid: bool) -> None:
    t = Table(players=players, seed=4, config=preset(mode))
    idle_until(t, ms)
    assert t.state.clock == ms and t.state.game_ms == ms
    assert salary_paid(t.state) is paid
    seat = t.state.current
    cash = t.state.players[seat].cash
    events = roll_to(t, 1)  # passes Start
    salary = [e for e in of(events, BankPaid) if e.reason == "salary"]
    assert salary == ([BankPaid(seat, SALARY, "salary")] if paid else [])
    assert t.state.players[seat].cash == cash + (SALARY if paid else 0)


@pytest.mark.parametrize(("ms", "paid"), [(44 * MIN + 1_000, True), (46 * MIN + 1_000, False)])
def test_E3_the_start_bonus_stops_with_the_salary(ms: int, paid: bool) -> None:
    t = Table(players=3, seed=4)
    idle_until(t, ms)
    seat = t.state.current
    cash = t.state.players[seat].cash
    events = roll_to(t, 0)  # exactly on Start
    bank = [(e.amount, e.reason) for e in of(events, BankPaid)]
    assert bank == ([(SALARY, "salary"), (BONUS, "start_bonus")] if paid else [])
    assert t.state.players[seat].cash == cash + (SALARY + BONUS if paid else 0)


def test_E3_custom_salary_stop_none_never_stops() -> None:
    t = Table(players=3, seed=4, config=preset("custom", salary_stop_minute=None))
    idle_until(t, 50 * MIN)
    assert salary_paid(t.state)
    events = roll_to(t, 1)
    assert [e.reason for e in of(events, BankPaid)] == ["salary"]


# -- E4: rent tax -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mode", "minute", "percent"),
    [
        ("classic", 60, 0),
        ("classic", 61, 50),
        ("classic", 65, 50),
        ("classic", 66, 60),
        ("classic", 70, 60),
        ("classic", 85, 90),
        ("classic", 86, 99),  # 100% capped at 99%
        ("speed", 39, 0),
        ("speed", 40, 50),
        ("speed", 45, 60),
        ("duel", 40, 50),
    ],
)
def test_E4_rent_tax_share_goes_to_the_bank(mode: str, minute: int, percent: int) -> None:
    t = Table(players=3, seed=6, config=preset(mode))
    idle_until(t, (minute - 1) * MIN + 2_000)
    s = t.state
    assert s.minute == minute
    assert rent_tax_percent(s) == percent
    payer = s.current
    owner = next(seat for seat in s.active_seats if seat != payer)
    give(s, owner, 39)
    s.players[owner].in_jail = False  # G9: no rent while the owner is in jail
    due = rent(s, 39)
    share = due * percent // 100
    events = roll_to(t, 39)
    assert PaymentDue(payer, owner, due, "rent", bank_share=share, square=39) in events
    payer_cash, owner_cash, bank_in = s.players[payer].cash, s.players[owner].cash, s.bank_in
    t.do(Pay(payer))
    assert s.players[payer].cash == payer_cash - due
    assert s.players[owner].cash == owner_cash + due - share
    assert s.bank_in == bank_in + share


def test_E4_rent_at_minute_70_is_taxed_60_percent() -> None:
    t = Table(players=3, seed=6)
    idle_until(t, 69 * MIN + 30_000)
    s = t.state
    assert s.minute == 70
    payer = s.current
    owner = next(seat for seat in s.active_seats if seat != payer)
    give(s, owner, 39)  # Quantix alone: rent $500
    s.players[owner].in_jail = False
    roll_to(t, 39)
    payer_cash, owner_cash, bank_in = s.players[payer].cash, s.players[owner].cash, s.bank_in
    events = t.do(Pay(payer))
    assert of(events, PaymentMade)[0].amount == 500
    assert s.players[payer].cash == payer_cash - 500
    assert s.players[owner].cash == owner_cash + 200  # 40% to the owner
    assert s.bank_in == bank_in + 300  # 60% to the bank


def test_E4_D3_a_bankruptcy_over_a_taxed_rent_hands_everything_to_the_owner() -> None:
    """E4 takes its share of rent paid; a debtor who cannot pay goes bankrupt to the owner instead, and
    D3 gives the owner everything: the bank's share of a rent never paid is not taken out of it."""
    t = Table(players=3, seed=6)
    idle_until(t, 69 * MIN + 30_000)
    s = t.state
    payer = s.current
    owner = next(seat for seat in s.active_seats if seat != payer)
    give(s, owner, 39)  # rent $500, 60% of it the bank's when paid
    s.players[owner].in_jail = False
    set_cash(t, payer, 100)  # nothing else to sell or mortgage
    owner_cash, bank_in = s.players[owner].cash, s.bank_in
    events = roll_to(t, 39)
    assert PlayerBankrupt(payer, owner, 3, "debt") in events
    assert s.players[owner].cash == owner_cash + 100 and s.bank_in == bank_in


def test_E4_rent_tax_caps_at_99_percent_late_in_the_game() -> None:
    t = Table(players=3, seed=6)
    idle_until(t, 120 * MIN)
    assert t.state.minute == 121
    assert rent_tax_percent(t.state) == 99


def test_E4_rent_tax_percent_steps_10_points_every_5_minutes_up_to_99() -> None:
    t = Table(players=3, seed=6)
    s = t.state
    for minute, percent in ((1, 0), (60, 0), (61, 50), (66, 60), (71, 70), (76, 80), (81, 90), (86, 99), (300, 99)):
        s.clock = (minute - 1) * MIN  # hand-set clock: only the formula is checked here
        assert (s.minute, rent_tax_percent(s)) == (minute, percent)


# -- E6: the table's clock ------------------------------------------------------------------


def test_E6_the_clock_never_goes_back() -> None:
    t = Table(players=3, seed=1)
    t.do(Tick(5_000))
    before = state_to_data(t.state)
    n = len(t.events)
    for bad in (4_999, 0, -1):
        with pytest.raises(RuleViolation) as exc:
            t.do(Tick(bad))
        assert exc.value.rule == "E6"
    for bad in (5_000.5, "6000", True):
        with pytest.raises(RuleViolation) as exc:
            t.do(Tick(bad))  # type: ignore[arg-type]
        assert exc.value.rule == "E6"
    assert state_to_data(t.state) == before
    assert len(t.events) == n
    # the same reading again is allowed and changes nothing
    assert t.do(Tick(5_000)) == []
    assert state_to_data(t.state) == before


def test_E6_clock_advanced_events_record_the_time_and_replay_rebuilds_it() -> None:
    t = Table(players=3, seed=1)
    for now in (1, 500, 30_000, 74_999):
        assert t.do(Tick(now)) == [ClockAdvanced(now)]
    assert [e.now for e in of(t.events, ClockAdvanced)] == [1, 500, 30_000, 74_999]
    assert t.replay_matches()
    from engine import replay

    assert replay(t.events).clock == 74_999


def test_E6_decide_a_tick_leaves_the_state_unchanged() -> None:
    t = Table(players=3, seed=1)
    seat = t.state.current
    before = state_to_data(t.state)
    events = decide(t.state, Tick(80_000))
    # the time-out happens at the deadline itself, then the clock reads the tick's time
    assert events[:2] == [ClockAdvanced(75_000), TurnTimedOut(seat, 1)]
    assert events[-1] == ClockAdvanced(80_000)
    assert state_to_data(t.state) == before
    # applying it gives the same events
    assert t.do(Tick(80_000)) == events


def _scaled(scale: int) -> TableConfig:
    return classic(clock=replace(ClockRules(), scale=scale))


def test_E6_game_ended_records_game_time_and_clock_scale() -> None:
    t = Table(players=2, seed=1, config=_scaled(100))
    from engine import ConfirmBack, RequestPause, VotePause

    a, b = t.state.order
    t.do(Tick(10_000))
    t.do(RequestPause(a))
    t.do(VotePause(b, True))
    t.do(Tick(70_000))
    t.do(ConfirmBack(a))
    t.do(ConfirmBack(b))
    t.do(Tick(73_000))  # paused 63 s
    t.do(Tick(80_000))
    events = t.do(Surrender(a))
    ended = events[-1]
    assert isinstance(ended, GameEnded)
    assert ended.winner == b
    assert ended.game_ms == 80_000 - 63_000
    assert ended.scale == 100
    assert t.replay_matches()


def test_E6_timers_are_in_game_time_whatever_the_scale() -> None:
    t = Table(players=3, seed=1, config=_scaled(100))
    assert t.state.turn_deadline - t.state.clock == 75_000
    assert t.do(Tick(74_999)) == [ClockAdvanced(74_999)]
    assert of(t.do(Tick(75_000)), TurnTimedOut)


def test_E6_a_faster_clock_is_just_a_different_now() -> None:
    """The service turns real time into game time (game ms = real ms x scale): a scale-1 table ticked
    every real second and a scale-100 table ticked every real 10 ms see the same game ticks and
    play the same game; only the recorded scale differs."""

    def run(scale: int, real_step_ms: int) -> list[Event]:
        t = Table(players=4, seed=11, config=_scaled(scale))
        real = 0
        for _ in range(100_000):
            if t.state.finished:
                break
            real += real_step_ms
            t.do(Tick(real * scale))
        assert t.state.finished
        return t.events

    slow = run(1, 1_000)
    fast = run(100, 10)
    assert len(slow) == len(fast)
    assert slow[1:-1] == fast[1:-1]
    end_slow, end_fast = slow[-1], fast[-1]
    assert isinstance(end_slow, GameEnded) and isinstance(end_fast, GameEnded)
    assert (end_slow.scale, end_fast.scale) == (1, 100)
    assert replace(end_slow, scale=100) == end_fast
