"""Sub-protocols run by services (config.external): the table opens them, waits, and applies their results.

The rules are the same pure modules; what changes is who keeps the timer and
who sends the result. Results are system commands: checked like any other,
refused with the rule ID when they no longer fit, applied exactly once.
"""

from __future__ import annotations

from engine import (
    BANK,
    SYSTEM_COMMANDS,
    AuctionSettled,
    AuctionStarted,
    BetDeclined,
    BetPlaced,
    BetSettled,
    CasinoOpened,
    DeclineProperty,
    EndTurn,
    ExecuteTrade,
    MortgageFeeDue,
    Pay,
    Phase,
    Roll,
    SettleAuction,
    SettleBet,
    Tick,
    TradeExecuted,
    classic,
    hasbro,
    next_deadline,
)

from .helpers import Table, force_dice, give, place, refused, set_cash

EXTERNAL = classic().with_changes(external=("auction", "trade", "casino"))
SQUARE = 6  # price 1,000, mortgage value 500
CASINO = 20


def declined() -> tuple[Table, int, AuctionStarted]:
    t = Table(players=3, config=EXTERNAL)
    me = t.state.current
    place(t.state, me, SQUARE - 3)
    force_dice(t.state, 1, 2)
    t.do(Roll(me))
    t.do(DeclineProperty(me))
    started = t.events[-1]
    assert isinstance(started, AuctionStarted)
    return t, me, started


def test_A1_external_auction_carries_what_the_service_needs_and_the_table_keeps_no_bid_timer() -> None:
    t, me, started = declined()
    assert me not in started.bidders
    assert started.bid_ms == 20_000
    # A3: each bidder's limit: cash plus what selling and mortgaging could raise, the square's mortgage included
    assert started.limits == tuple(15000 + 500 for _ in started.bidders)
    assert t.state.phase is Phase.AUCTION
    assert next_deadline(t.state) is None  # the auction service times the bids
    events = t.do(Tick(10 * 60_000))  # ten minutes pass: the table does not pass for anyone
    assert t.types(events) == ["ClockAdvanced"]
    assert t.state.phase is Phase.AUCTION


def test_A1_external_auction_result_settles_it_once_and_the_winner_pays() -> None:
    t, _, started = declined()
    winner = started.bidders[1]
    events = t.do(SettleAuction(BANK, started.auction_id, winner, 1300))
    assert events[0] == AuctionSettled(started.auction_id, SQUARE, winner, 1300)
    assert t.state.owner[SQUARE] == winner
    assert t.state.phase is Phase.PAYMENT  # A3: the won bid is a mandatory payment
    t.do(Pay(winner))
    assert t.state.players[winner].cash == 15000 - 1300
    assert t.state.phase is Phase.POST_ROLL
    # a redelivered result changes nothing and says why
    error = refused(t, SettleAuction(BANK, started.auction_id, winner, 1300), "A1")
    assert "already settled" in error.message


def test_A1_external_auction_without_bids_leaves_the_square_unowned() -> None:
    t, _, started = declined()
    t.do(SettleAuction(BANK, started.auction_id, BANK, 0))
    assert t.state.owner[SQUARE] == BANK
    assert t.state.auction is None


def test_A1_external_auction_result_must_name_a_bidder_and_a_legal_price() -> None:
    t, me, started = declined()
    refused(t, SettleAuction(BANK, started.auction_id, me, 1500), "A1")  # the decliner did not bid
    refused(t, SettleAuction(BANK, started.auction_id, started.bidders[0], 900), "A1")  # under the start
    refused(t, SettleAuction(BANK, started.auction_id + 1, started.bidders[0], 1000), "A1")  # not open


def test_A3_external_auction_won_beyond_cash_starts_debt_resolution() -> None:
    t, _, started = declined()
    winner = started.bidders[0]
    give(t.state, winner, 39)  # mortgage value 2,000: enough to raise the rest
    set_cash(t, winner, 200)
    t.do(SettleAuction(BANK, started.auction_id, winner, 1000))
    assert t.state.owner[SQUARE] == winner
    assert t.state.phase is Phase.PAYMENT
    assert t.state.payments[0].debtor == winner and t.state.payments[0].amount == 1000


def test_A1_a_table_running_its_own_auctions_refuses_a_service_result() -> None:
    t = Table(players=3)
    me = t.state.current
    place(t.state, me, SQUARE - 3)
    force_dice(t.state, 1, 2)
    t.do(Roll(me))
    t.do(DeclineProperty(me))
    started = t.events[-1]
    assert isinstance(started, AuctionStarted) and started.limits == () and started.bid_ms == 0
    refused(t, SettleAuction(BANK, started.auction_id, BANK, 0), "A1")


def at_casino(t: Table) -> int:
    seat = t.state.current
    place(t.state, seat, CASINO - 3)
    force_dice(t.state, 1, 2)
    t.do(Roll(seat))
    return seat


def test_K1_external_casino_opens_with_cash_and_deadline_and_waits_for_the_service() -> None:
    t = Table(players=3, config=EXTERNAL)
    seat = at_casino(t)
    opened = t.events[-1]
    assert opened == CasinoOpened(seat, 15000, t.state.turn_deadline)
    assert next_deadline(t.state) is None
    assert t.types(t.do(Tick(10 * 60_000))) == ["ClockAdvanced"]
    assert t.state.phase is Phase.CASINO


def test_K2_K4_external_casino_settlement_pays_and_feeds_the_pool() -> None:
    t = Table(players=3, config=EXTERNAL)
    seat = at_casino(t)
    events = t.do(SettleBet(seat, "bet-1", (3, 1), 3, False))
    assert events == [BetPlaced(seat, (1, 3), 1000, 500), BetSettled(seat, (1, 3), 3, False, 3000, 0, 0)]
    assert t.state.players[seat].cash == 15000 - 1000 + 3000
    assert t.state.jackpot == 500  # K4
    assert t.state.phase is Phase.POST_ROLL
    refused(t, SettleBet(seat, "bet-1", (3, 1), 3, False), "K1")  # redelivered: no bet is open


def test_K3_external_casino_jackpot_pays_the_whole_pool() -> None:
    t = Table(players=3, config=EXTERNAL)
    t.state.jackpot = 2500  # as if five earlier bets
    t.state.bank_out += 2500
    seat = at_casino(t)
    events = t.do(SettleBet(seat, "bet-2", (6,), 1, True))
    assert events[-1] == BetSettled(seat, (6,), 1, True, 0, 3000, 0)
    assert t.state.jackpot == 0
    assert t.state.players[seat].cash == 15000 - 1000 + 3000


def test_K1_external_casino_decline_and_bad_settlements() -> None:
    t = Table(players=3, config=EXTERNAL)
    seat = at_casino(t)
    other = (seat + 1) % 3
    refused(t, SettleBet(other, "x", (1,), 1, False), "K1")  # not the bettor
    refused(t, SettleBet(seat, "x", (1, 1), 1, False), "K1")  # not distinct
    refused(t, SettleBet(seat, "x", (1,), 7, False), "K2")  # no such face
    assert t.do(SettleBet(seat, "x", (), 0, False)) == [BetDeclined(seat)]


def test_T1_external_trade_executes_atomically_within_its_turn() -> None:
    t = Table(players=3, config=EXTERNAL)
    me = t.state.current
    other = (me + 1) % 3
    give(t.state, me, 1)
    give(t.state, other, 3)
    trade = ExecuteTrade(me, 7, other, t.state.turn_no, give_squares=(1,), take_squares=(3,))
    events = t.do(trade)
    assert events == [TradeExecuted(7, me, other, 0, (1,), 0, (3,))]
    assert t.state.owner[1] == other and t.state.owner[3] == me
    assert t.state.next_trade_id == 8


def test_T1_external_trade_lapses_with_its_turn_and_window() -> None:
    t = Table(players=3, config=EXTERNAL)
    me = t.state.current
    other = (me + 1) % 3
    give(t.state, me, 1)
    give(t.state, other, 3)
    stale_turn = ExecuteTrade(me, 1, other, t.state.turn_no + 1, give_squares=(1,), take_squares=(3,))
    refused(t, stale_turn, "T1")
    force_dice(t.state, 1, 2)
    place(t.state, me, 30 - 3 - 10)  # lands on a plain square: after rolling, no trade window
    t.do(Roll(me))
    if t.state.phase is Phase.POST_ROLL:
        refused(t, ExecuteTrade(me, 1, other, t.state.turn_no, give_squares=(1,), take_squares=(3,)), "T1")
        t.do(EndTurn(me))


def test_T2_external_trade_made_stale_by_a_payment_is_refused() -> None:
    t = Table(players=3, config=EXTERNAL)
    me = t.state.current
    other = (me + 1) % 3
    give(t.state, other, 39)  # price 4,000
    trade = ExecuteTrade(me, 1, other, t.state.turn_no, give_cash=4000, take_squares=(39,))
    set_cash(t, me, 3000)  # the rent paid since the proposal
    refused(t, trade, "T2")


def test_T5_external_trade_still_balanced_at_execution() -> None:
    t = Table(players=3, config=EXTERNAL)
    me = t.state.current
    other = (me + 1) % 3
    give(t.state, other, 39)
    refused(t, ExecuteTrade(me, 1, other, t.state.turn_no, give_cash=100, take_squares=(39,)), "T5")


HASBRO_EXTERNAL = hasbro().with_changes(external=("trade",))
BOARDWALK = 39


def mortgaged_swap(recorded: tuple[int, ...], *, mortgaged_now: bool, known: bool = True) -> tuple[Table, ExecuteTrade]:
    """A hasbro table where the current player's proposal for the next seat's Boardwalk was agreed at
    a trade service that recorded `recorded` as mortgaged; Boardwalk is mortgaged now or not."""
    t = Table(players=3, config=HASBRO_EXTERNAL)
    me = t.state.current
    other = (me + 1) % 3
    give(t.state, other, BOARDWALK)
    t.state.mortgaged_round[BOARDWALK] = t.state.round if mortgaged_now else -1
    agreed = ExecuteTrade(
        me,
        1,
        other,
        t.state.turn_no,
        give_cash=400,
        take_squares=(BOARDWALK,),
        mortgaged_squares=recorded,
        mortgages_recorded=known,
    )
    return t, agreed


def test_T2_external_trade_refused_when_a_square_was_mortgaged_since_the_proposal() -> None:
    """The counterparty mortgaged the square they give after the proposal: the proposer would get it
    mortgaged, with an M4 fee, on terms changed under their offer."""
    t, agreed = mortgaged_swap((), mortgaged_now=True)
    exc = refused(t, agreed, "T2")
    assert "mortgaged since the proposal" in exc.message
    assert t.state.owner[BOARDWALK] == (t.state.current + 1) % 3


def test_T2_external_trade_refused_when_a_square_was_lifted_since_the_proposal() -> None:
    t, agreed = mortgaged_swap((BOARDWALK,), mortgaged_now=False)
    exc = refused(t, agreed, "T2")
    assert "lifted" in exc.message


def test_T2_external_trade_of_a_square_mortgaged_as_offered_executes_and_M4_applies() -> None:
    t, agreed = mortgaged_swap((BOARDWALK,), mortgaged_now=True)
    me = t.state.current
    events = t.do(agreed)
    assert isinstance(events[0], TradeExecuted) and t.state.owner[BOARDWALK] == me
    assert MortgageFeeDue(me, BOARDWALK, 20) in events  # M4: 10% of the mortgage value, $200


def test_T2_external_trade_sent_before_mortgages_were_recorded_checks_legality_only() -> None:
    t, agreed = mortgaged_swap((), mortgaged_now=True, known=False)
    events = t.do(agreed)
    assert isinstance(events[0], TradeExecuted)


def test_T2_external_trade_with_malformed_mortgaged_squares_is_refused() -> None:
    t, agreed = mortgaged_swap((), mortgaged_now=False)
    agreed.mortgaged_squares = ("Boardwalk",)  # type: ignore[assignment]
    exc = refused(t, agreed, "T2")  # nothing changes (the helper checks the state and the log)
    assert "whole numbers" in exc.message


def test_system_commands_are_the_three_results() -> None:
    assert {c.__name__ for c in SYSTEM_COMMANDS} == {"SettleAuction", "SettleBet", "ExecuteTrade"}
