"""Jail rules J1-J4 (online rule set, Classic mode: fine $500, three tries)."""

from __future__ import annotations

from engine import (
    BANK,
    BankPaid,
    BuyProperty,
    CardDrawn,
    DiceRolled,
    EndTurn,
    LeftJail,
    Mortgage,
    Moved,
    Pay,
    PayJailFine,
    PaymentDue,
    PaymentMade,
    Phase,
    PlayerBankrupt,
    Roll,
    SentToJail,
    TurnStarted,
    UseJailCard,
    legal_commands,
)

from .helpers import Table, force_dice, give, jail, place, refused, set_cash

FINE = 500
JAIL_CARD = 19


# -- local set-up helpers ------------------------------------------------------------


def hand_jail_card(t: Table, seat: int) -> None:
    """Give `seat` the Get Out of Jail Free card, taking it out of the draw pile."""
    t.state.deck.remove(JAIL_CARD)
    t.state.players[seat].jail_cards.append(JAIL_CARD)


def top_card(t: Table, card_id: int) -> None:
    t.state.deck.remove(card_id)
    t.state.deck.insert(0, card_id)


def of(events: list, cls: type) -> list:
    return [e for e in events if isinstance(e, cls)]


def roll(t: Table, d1: int, d2: int) -> list:
    force_dice(t.state, d1, d2)
    return t.do(Roll(t.state.current))


def other_turn(t: Table) -> None:
    """The current (free) player takes a quiet turn: from start to just visiting, then ends it."""
    seat = t.state.current
    assert not t.state.players[seat].in_jail
    place(t.state, seat, 0)
    roll(t, 4, 6)
    t.do(EndTurn(seat))


# -- J1: three ways to go to jail -----------------------------------------------------------


def test_J1_go_to_jail_square() -> None:
    t = Table(players=3, seed=1)
    me = t.state.current
    place(t.state, me, 22)
    events = roll(t, 3, 5)  # 22 -> 30
    assert Moved(me, 22, 30) in events
    assert of(events, SentToJail) == [SentToJail(me, "go_to_jail")]
    p = t.state.players[me]
    assert p.in_jail and p.position == 10 and p.jail_turns == 0
    assert t.state.current != me


def test_J1_go_to_jail_card() -> None:
    t = Table(players=3, seed=1)
    me = t.state.current
    top_card(t, 1)  # Go to Jail. Do not pass Start
    place(t.state, me, 30)
    cash = t.state.players[me].cash
    events = roll(t, 2, 4)  # 30 -> 36 chance, with no doubles
    assert of(events, CardDrawn) == [CardDrawn(me, "chance", 1)]
    assert of(events, SentToJail) == [SentToJail(me, "card")]
    assert not of(events, BankPaid)
    p = t.state.players[me]
    assert p.in_jail and p.position == 10 and p.cash == cash
    assert t.types(events)[-2:] == ["TurnEnded", "TurnStarted"]
    assert t.state.current != me


def test_J1_go_to_jail_card_on_doubles_ends_the_turn() -> None:
    t = Table(players=3, seed=1)
    me = t.state.current
    top_card(t, 1)
    place(t.state, me, 32)
    events = roll(t, 2, 2)  # 32 -> 36 chance with doubles: still jailed and the turn ends
    assert of(events, SentToJail) == [SentToJail(me, "card")]
    assert t.state.current != me and not t.state.roll_again


def test_J1_third_doubles() -> None:
    t = Table(players=3, seed=1)
    me = t.state.current
    give(t.state, me, 6, 11)
    roll(t, 3, 3)  # 6
    roll(t, 2, 3)  # 11 (not doubles: ends the doubles streak)
    t.do(EndTurn(me))
    other_turn(t)
    other_turn(t)
    assert t.state.current == me
    place(t.state, me, 0)
    roll(t, 3, 3)  # 6
    roll(t, 1, 1)  # 8, unowned
    t.do(BuyProperty(me))
    events = roll(t, 5, 5)  # third doubles in this turn
    assert of(events, SentToJail) == [SentToJail(me, "third_doubles")]
    assert t.state.players[me].in_jail and t.state.players[me].position == 10


# -- J2: leaving by fine, card or roll ----------------------------------------------------------


def test_J2_pay_fine_then_roll_and_move() -> None:
    t = Table(players=3, seed=1)
    me = t.state.current
    jail(t, me)
    cash = t.state.players[me].cash
    assert PayJailFine(me) in legal_commands(t.state, me)
    events = t.do(PayJailFine(me))
    assert events == [LeftJail(me, "fine", FINE)]
    p = t.state.players[me]
    assert not p.in_jail and p.cash == cash - FINE and p.position == 10
    assert t.state.bank_in >= FINE
    # the player must still roll and move this turn
    assert t.state.phase is Phase.PRE_ROLL and t.state.actor == me
    refused(t, EndTurn(me), "G2")
    refused(t, PayJailFine(me), "J2")  # not in jail any more
    events = roll(t, 2, 3)
    assert events[1] == Moved(me, 10, 15)
    assert t.state.players[me].position == 15


def test_J2_use_card_then_roll_and_move_card_goes_to_bottom() -> None:
    t = Table(players=3, seed=1)
    me = t.state.current
    jail(t, me)
    hand_jail_card(t, me)
    cash = t.state.players[me].cash
    assert UseJailCard(me) in legal_commands(t.state, me)
    events = t.do(UseJailCard(me))
    assert events == [LeftJail(me, "card", 0)]
    p = t.state.players[me]
    assert not p.in_jail and p.jail_cards == [] and p.cash == cash
    assert t.state.deck[-1] == JAIL_CARD  # back at the bottom of the deck
    assert len(t.state.deck) == 20
    assert t.state.phase is Phase.PRE_ROLL
    events = roll(t, 1, 3)
    assert events[1] == Moved(me, 10, 14)


def test_J2_failed_roll_stays_in_jail_and_turn_goes_on() -> None:
    t = Table(players=3, seed=1)
    me = t.state.current
    jail(t, me)
    events = roll(t, 1, 2)
    assert events == [DiceRolled(me, 1, 2)]  # no move
    p = t.state.players[me]
    assert p.in_jail and p.position == 10 and p.jail_turns == 1
    assert t.state.phase is Phase.POST_ROLL
    refused(t, Roll(me), "G2")
    refused(t, PayJailFine(me), "J2")  # only at the start of the turn
    t.do(EndTurn(me))
    assert t.state.current != me
    assert t.state.players[me].in_jail


def test_J2_fine_or_card_only_at_start_of_turn_after_a_failed_roll_refused() -> None:
    t = Table(players=3, seed=1)
    me = t.state.current
    jail(t, me)
    hand_jail_card(t, me)
    roll(t, 1, 2)
    refused(t, UseJailCard(me), "J2")


def test_J2_pay_fine_when_not_in_jail_refused() -> None:
    t = Table(players=3, seed=1)
    me = t.state.current
    refused(t, PayJailFine(me), "J2")
    assert PayJailFine(me) not in legal_commands(t.state, me)


def test_J2_use_card_when_not_in_jail_or_without_card_refused() -> None:
    t = Table(players=3, seed=1)
    me = t.state.current
    hand_jail_card(t, me)
    refused(t, UseJailCard(me), "J2")  # holds a card, but not in jail
    t2 = Table(players=3, seed=1)
    me2 = t2.state.current
    jail(t2, me2)
    refused(t2, UseJailCard(me2), "J2")  # in jail, no card
    assert UseJailCard(me2) not in legal_commands(t2.state, me2)


def test_J2_pay_fine_out_of_turn_refused() -> None:
    t = Table(players=3, seed=1)
    other = t.state.order[1]
    jail(t, other)
    refused(t, PayJailFine(other), "J2")
    hand_jail_card(t, other)
    refused(t, UseJailCard(other), "J2")


def test_J2_pay_fine_without_the_cash_refused() -> None:
    t = Table(players=3, seed=1)
    me = t.state.current
    jail(t, me)
    set_cash(t, me, FINE - 1)
    refused(t, PayJailFine(me), "J2")


# -- J3: doubles in jail ---------------------------------------------------------------------------


def test_J3_doubles_in_jail_free_and_no_reroll() -> None:
    t = Table(players=3, seed=1)
    me = t.state.current
    jail(t, me, turns=1)
    give(t.state, me, 18)
    cash = t.state.players[me].cash
    events = roll(t, 4, 4)
    assert t.types(events) == ["DiceRolled", "LeftJail", "Moved"]
    assert events[1] == LeftJail(me, "doubles", 0)
    assert events[2] == Moved(me, 10, 18)
    p = t.state.players[me]
    assert not p.in_jail and p.jail_turns == 0 and p.cash == cash  # no fine
    assert t.state.phase is Phase.POST_ROLL  # no further roll despite the doubles
    refused(t, Roll(me), "G2")
    t.do(EndTurn(me))
    assert t.state.current != me


def test_J3_doubles_in_jail_resolve_the_square() -> None:
    t = Table(players=3, seed=1)
    me = t.state.current
    owner = t.state.order[1]
    jail(t, me, turns=2)
    give(t.state, owner, 16)
    events = roll(t, 3, 3)  # 10 -> 16, owner's property
    assert of(events, PaymentDue) == [PaymentDue(me, owner, 140, "rent", square=16)]
    t.do(Pay(me))
    assert t.state.phase is Phase.POST_ROLL


# -- J4: third failed roll ------------------------------------------------------------------------------


def test_J4_three_failed_rolls_force_fine_and_move() -> None:
    t = Table(players=2, seed=1)
    me = t.state.current
    give(t.state, me, 15)
    jail(t, me)
    for k, (d1, d2) in enumerate([(1, 2), (1, 3)], start=1):
        events = roll(t, d1, d2)
        assert events == [DiceRolled(me, d1, d2)]
        assert t.state.players[me].jail_turns == k
        t.do(EndTurn(me))
        other_turn(t)
        assert t.state.current == me and t.state.players[me].in_jail
    cash = t.state.players[me].cash
    events = roll(t, 2, 3)  # third failure
    assert events == [DiceRolled(me, 2, 3), PaymentDue(me, BANK, FINE, "jail_fine", True, square=10)]
    assert t.state.phase is Phase.PAYMENT and t.state.actor == me
    refused(t, EndTurn(me), "G2")
    events = t.do(Pay(me))
    assert events == [
        PaymentMade(me, BANK, FINE, "jail_fine", square=10),
        LeftJail(me, "forced_fine", 0),
        Moved(me, 10, 15),
    ]
    p = t.state.players[me]
    assert not p.in_jail and p.jail_turns == 0 and p.position == 15
    assert p.cash == cash - FINE
    assert t.state.phase is Phase.POST_ROLL


def test_J4_forced_fine_then_resolves_the_square_reached() -> None:
    t = Table(players=3, seed=1)
    me = t.state.current
    jail(t, me, turns=2)
    events = roll(t, 1, 3)  # third failure -> 14, unowned
    assert of(events, PaymentDue) == [PaymentDue(me, BANK, FINE, "jail_fine", True, square=10)]
    events = t.do(Pay(me))
    assert t.types(events) == ["PaymentMade", "LeftJail", "Moved", "PurchaseOffered"]
    assert t.state.phase is Phase.BUY


def test_J4_forced_fine_after_mortgaging_when_cash_is_short() -> None:
    t = Table(players=3, seed=1)
    me = t.state.current
    jail(t, me, turns=2)
    give(t.state, me, 15)
    set_cash(t, me, 300)
    events = roll(t, 2, 3)
    assert events[-1] == PaymentDue(me, BANK, FINE, "jail_fine", True, square=10)
    assert t.state.phase is Phase.PAYMENT and t.state.actor == me
    refused(t, Pay(me), "D1")
    assert t.state.players[me].in_jail and t.state.players[me].position == 10
    t.do(Mortgage(me, 15))
    assert t.state.players[me].cash == 300 + 1000
    events = t.do(Pay(me))
    assert LeftJail(me, "forced_fine", 0) in events
    assert Moved(me, 10, 15) in events
    p = t.state.players[me]
    assert p.cash == 300 + 1000 - FINE
    assert not p.in_jail and p.position == 15
    assert t.state.phase is Phase.POST_ROLL


def test_J4_forced_fine_that_cannot_be_raised_is_bankruptcy() -> None:
    t = Table(players=3, seed=1)
    me = t.state.current
    jail(t, me, turns=2)
    set_cash(t, me, 300)
    events = roll(t, 2, 3)
    bankrupt = of(events, PlayerBankrupt)
    assert len(bankrupt) == 1 and bankrupt[0].seat == me and bankrupt[0].creditor == BANK
    assert t.state.players[me].bankrupt
    assert of(events, TurnStarted) and t.state.current != me


def test_J4_doubles_on_the_third_try_frees_without_fine() -> None:
    t = Table(players=3, seed=1)
    me = t.state.current
    jail(t, me, turns=2)
    give(t.state, me, 16)
    cash = t.state.players[me].cash
    events = roll(t, 3, 3)
    assert t.types(events) == ["DiceRolled", "LeftJail", "Moved"]
    assert events[1] == LeftJail(me, "doubles", 0)
    assert t.state.players[me].position == 16
    assert t.state.players[me].cash == cash  # no fine
    assert t.state.phase is Phase.POST_ROLL


def test_J4_may_still_pay_the_fine_at_the_start_of_the_third_turn() -> None:
    t = Table(players=3, seed=1)
    me = t.state.current
    jail(t, me, turns=2)
    t.do(PayJailFine(me))
    events = roll(t, 1, 2)
    assert events[1] == Moved(me, 10, 13)
    assert not t.state.players[me].in_jail
