"""R3: a player may leave the game at any time; leaving counts as bankruptcy to the bank."""

from __future__ import annotations

import pytest

from engine import (
    BANK,
    AuctionSettled,
    Bid,
    ConfirmBack,
    DeclineProperty,
    GameEnded,
    Leave,
    LiftMortgage,
    MortgageExpired,
    PassBid,
    Phase,
    PlayerBankrupt,
    RequestPause,
    ResumeScheduled,
    Roll,
    Tick,
    TurnStarted,
    VotePause,
    apply,
    legal_commands,
    new_game,
    next_deadline,
    preset,
    replay,
)
from engine.cards import Effect
from engine.codec import state_to_data
from engine.trade import ProposeTrade

from .helpers import Table, force_dice, give, place, refused, set_cash
from .test_bankruptcy import JAIL_FREE, land_on_39, table_with_tech_owner
from .test_cards import draw


def declined_auction(t: Table, square: int = 3) -> int:
    """The current player lands on unowned `square` (from 3 back, no doubles) and declines it: its
    auction runs (A1). Returns the decliner."""
    a = t.state.current
    place(t.state, a, square - 3)
    force_dice(t.state, 1, 2)
    t.do(Roll(a))
    t.do(DeclineProperty(a))
    assert t.state.auction is not None and t.state.auction.square == square
    return a


def test_R3_a_player_leaves_out_of_turn_bankrupt_to_the_bank_and_the_turn_goes_on() -> None:
    t = Table(4, seed=1)
    current, leaver = t.state.current, t.state.order[2]
    give(t.state, leaver, 1, 3, 5)
    t.state.buildings[1] = t.state.buildings[3] = 2
    t.state.mortgaged_round[5] = t.state.round
    t.state.players[leaver].jail_cards.append(t.state.deck.pop(t.state.deck.index(JAIL_FREE)))
    cash, bank_in = t.state.players[leaver].cash, t.state.bank_in
    events = t.do(Leave(leaver))
    assert events == [PlayerBankrupt(leaver, BANK, 4, "surrender")]
    assert t.state.players[leaver].bankrupt and t.state.players[leaver].cash == 0
    assert t.state.bank_in == bank_in + cash
    assert [t.state.owner[sq] for sq in (1, 3, 5)] == [BANK] * 3
    assert [t.state.buildings[sq] for sq in (1, 3, 5)] == [0, 0, 0]
    assert t.state.mortgaged_round[5] == -1
    assert JAIL_FREE in t.state.deck
    assert t.state.current == current and t.state.phase is Phase.PRE_ROLL  # the turn is not the leaver's
    t.do(Roll(current))


def test_R3_leaving_in_debt_to_a_player_goes_to_the_bank_not_to_the_creditor() -> None:
    """Where a surrender in debt to a player hands everything to that player (D3)."""
    t, debtor, creditor = table_with_tech_owner()
    give(t.state, debtor, 6, 8, 9)
    set_cash(t.state, debtor, 200)
    land_on_39(t, debtor)
    assert t.state.phase is Phase.PAYMENT
    creditor_cash = t.state.players[creditor].cash
    events = t.do(Leave(debtor))
    assert events[0] == PlayerBankrupt(debtor, BANK, 4, "surrender")
    assert t.state.players[creditor].cash == creditor_cash
    assert [t.state.owner[sq] for sq in (6, 8, 9)] == [BANK] * 3
    assert not t.state.payments
    assert isinstance(events[-1], TurnStarted) and events[-1].seat == creditor  # the leaver's turn ended


def test_R3_the_high_bidder_leaves_an_auction_and_the_others_bid_on_from_the_start() -> None:
    t = Table(4, seed=1)
    a = declined_auction(t)
    auction = t.state.auction
    assert auction is not None and len(auction.bidders) == 3
    first = t.state.actor
    t.do(Bid(first, auction.min_bid))
    t.do(Leave(first))
    assert auction.high_bidder == BANK and auction.high_bid == 0  # a withdrawn high bid is void
    bidder = t.state.actor
    assert bidder not in (first, a)
    t.do(Bid(bidder, auction.start_price))
    other = t.state.actor
    assert other not in (first, bidder)
    events = t.do(PassBid(other))
    assert AuctionSettled(auction.auction_id, 3, bidder, auction.start_price) in events
    assert t.state.owner[3] == bidder


def test_R3_the_last_player_not_back_from_a_pause_leaves_and_the_game_resumes() -> None:
    t = Table(3, seed=1)
    a, b, c = t.state.order
    t.do(RequestPause(a))
    t.do(VotePause(b, True))
    t.do(VotePause(c, True))
    assert t.state.paused
    t.do(ConfirmBack(a))
    t.do(ConfirmBack(b))
    events = t.do(Leave(c))  # a paused game may be left; everyone still playing is back
    assert events[0] == PlayerBankrupt(c, BANK, 3, "surrender")
    assert isinstance(events[-1], ResumeScheduled)
    assert t.replay_matches()


def test_R3_the_second_last_player_leaves_and_the_other_wins() -> None:
    t = Table(2, seed=1)
    a, b = t.state.order
    events = t.do(Leave(b))
    assert events[0] == PlayerBankrupt(b, BANK, 2, "surrender")
    assert len(events) == 2 and isinstance(events[1], GameEnded) and events[1].reason == "last_player"
    assert t.state.finished and t.state.winner == a
    assert t.state.players[b].place == 2 and t.state.players[a].place == 1


def test_R3_only_an_active_player_leaves_and_a_refusal_changes_nothing() -> None:
    t = Table(3, seed=1)
    a, b, c = t.state.order
    t.do(Leave(c))
    refused(t, Leave(c), "G1")  # already out
    refused(t, Leave(7), "G1")
    t.do(Leave(b))  # the game is over
    refused(t, Leave(a), "D5")


def test_R3_leave_is_never_listed_as_a_move_so_no_bot_picks_it() -> None:
    t = Table(4, seed=1)
    for seat in range(4):
        assert not any(isinstance(c, Leave) for c in legal_commands(t.state, seat))


@pytest.mark.parametrize("seed", [3, 11])
def test_R3_a_game_with_players_leaving_at_random_moments_replays_to_the_same_state(seed: int) -> None:
    state, events = new_game(preset("classic"), ["a", "b", "c", "d"], seed)
    leavers = [state.order[3], state.order[1]]
    commands = 0
    while not state.finished and commands < 400:
        if commands in (37, 151) and leavers:
            events += apply(state, Leave(leavers.pop()))
        else:
            command = legal_commands(state, state.actor)[0]
            events += apply(state, command)
        commands += 1
    assert sum(isinstance(e, PlayerBankrupt) and e.creditor == BANK for e in events) >= 2
    assert state_to_data(replay(events)) == state_to_data(state)


def test_R3_M3_a_turn_started_during_an_auction_still_loses_its_expired_mortgage_once_the_auction_ends() -> None:
    """The player to act leaves during the auction of a square they declined: the next player's turn
    starts while that auction runs, and their mortgage past the limit goes to auction once it ends."""
    t = Table(4, seed=1)
    a = t.state.current
    b = t.state.order[1]
    give(t.state, b, 1)
    t.state.mortgaged_round[1] = 1
    t.state.round = 8
    declined_auction(t, 39)
    events = t.do(Leave(a))
    assert TurnStarted(b, 8) in events and t.state.auction is not None and t.state.auction.square == 39
    while t.state.auction is not None and t.state.auction.square == 39:
        events = t.do(PassBid(t.state.actor))
    assert MortgageExpired(b, 1) in events
    assert t.state.auction is not None and t.state.auction.square == 1
    assert not any(isinstance(c, LiftMortgage) for c in legal_commands(t.state, b))


def test_R3_A1_the_bidder_after_one_who_leaves_has_their_own_20_seconds() -> None:
    t = Table(4, seed=1)
    declined_auction(t)
    first = t.state.actor
    t.do(Tick(15_000))  # 5 s of the first bidder's 20 s left
    t.do(Leave(first))
    assert t.state.actor != first
    assert t.state.bid_deadline == 15_000 + 20_000


def test_R3_E5_a_turn_that_starts_during_a_pause_has_its_full_75_seconds_after_the_resume() -> None:
    t = Table(3, seed=3)
    a = t.state.current
    t.do(Tick(10_000))
    t.do(RequestPause(a))
    for seat in t.state.active_seats:
        if seat != a:
            t.do(VotePause(seat, True))
    t.do(Tick(600_000))  # ten minutes into the pause
    t.do(Leave(a))  # the next turn starts while the table is paused
    for seat in t.state.active_seats:
        t.do(ConfirmBack(seat))
    resume = t.state.resume_at
    t.do(Tick(resume))
    assert not t.state.paused
    assert t.state.turn_deadline == resume + 75_000  # E1, E5: its whole timer, from the resume


def test_R3_E5_M3_a_turn_that_starts_during_a_pause_loses_its_expired_mortgage_at_the_resume_not_before() -> None:
    """No auction opens while the table is paused (a delegated one's bid clock would run at the auction
    service meanwhile): the next player's expired mortgage goes to auction once the game resumes."""
    t = Table(3, seed=3)
    a = t.state.current
    b = t.state.order[(t.state.order.index(a) + 1) % 3]
    give(t.state, b, 1)
    t.state.mortgaged_round[1] = 1
    t.state.round = 8
    t.do(RequestPause(a))
    for seat in t.state.active_seats:
        if seat != a:
            t.do(VotePause(seat, True))
    events = t.do(Leave(a))  # b's turn starts while the table is paused
    assert TurnStarted(b, 8) in events and t.state.current == b
    assert t.state.auction is None and not any(isinstance(e, MortgageExpired) for e in events)
    for seat in t.state.active_seats:
        t.do(ConfirmBack(seat))
    events = t.do(Tick(t.state.resume_at))
    kinds = [type(e).__name__ for e in events]
    assert kinds.index("GameResumed") < kinds.index("MortgageExpired") < kinds.index("AuctionStarted")
    assert t.state.auction is not None and t.state.auction.square == 1


def test_R3_E1_the_proposer_has_their_turn_timer_again_when_the_counterparty_leaves() -> None:
    """As when the counterparty declines: play comes back to the proposer (E1's decision)."""
    t = Table(3, seed=3)
    a = t.state.current
    other = next(s for s in t.state.active_seats if s != a)
    t.do(Tick(10_000))
    t.do(ProposeTrade(a, other, give_cash=100, take_cash=100))
    t.do(Tick(74_000))
    t.do(Leave(other))
    assert t.state.trade is None and t.state.turn_deadline == 74_000 + 75_000


def test_R3_C4_a_demolition_with_no_opponents_building_left_closes_and_the_turn_goes_on() -> None:
    """Duel: the only opponent with buildings leaves while the drawer chooses what to demolish: the
    buildings went with them, so nothing happens (the choice used to stay open with nothing to pick,
    and its time-out failed)."""
    t = Table(3, seed=1, config=preset("duel"))
    drawer = t.state.current
    victim = next(s for s in t.state.order if s != drawer)
    for sq in (37, 39):
        t.state.owner[sq] = victim
        t.state.buildings[sq] = 2
        t.state.mortgaged_round[sq] = -1
    for sq in t.state.config.board.purchasable:  # nobody else has a building
        if sq not in (37, 39):
            t.state.buildings[sq] = 0
    draw(t, next(c.id for c in t.state.config.chance_deck if c.effect is Effect.DEMOLISH))
    assert t.state.choice == "demolish"
    t.do(Leave(victim))
    assert t.state.choice == "" and t.state.phase is Phase.POST_ROLL
    t.do(Tick(next_deadline(t.state) or 0))  # the turn's time-out ends the turn as usual
    assert t.state.current != drawer
