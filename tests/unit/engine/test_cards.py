"""Chance cards C4 and card payments C5 (online rule set, Classic mode)."""

from __future__ import annotations

import pytest

from engine import (
    BANK,
    BankPaid,
    CardDrawn,
    CasinoOpened,
    DeckShuffled,
    DeclineBet,
    DeclineProperty,
    Effect,
    EndTurn,
    JailExit,
    Leave,
    LeftJail,
    Mortgage,
    Moved,
    PassBid,
    Pay,
    PaymentDue,
    PaymentMade,
    Phase,
    PlayerBankrupt,
    PurchaseOffered,
    Roll,
    SellBuilding,
    SentToJail,
    Surrender,
    UseJailCard,
    classic,
    legal_commands,
    rng,
)

from .helpers import Table, force_dice, give, place, refused, set_cash

SALARY = 2000
BONUS = 1000
JAIL_CARD = 19


# -- local set-up helpers ------------------------------------------------------------


def top_card(t: Table, card_id: int) -> None:
    t.state.deck.remove(card_id)
    t.state.deck.insert(0, card_id)


def of(events: list, cls: type) -> list:
    return [e for e in events if isinstance(e, cls)]


# Rolls (start square, d1, d2) that land on each chance square without doubles.
REACH = {7: (0, 3, 4), 22: (15, 3, 4), 36: (30, 2, 4), 2: (37, 2, 3), 33: (27, 2, 4)}


def draw(t: Table, card_id: int, chance: int = 7) -> list:
    """The current player lands on chance square `chance` (no doubles) and draws `card_id`."""
    me = t.state.current
    start, d1, d2 = REACH[chance]
    place(t.state, me, start)
    top_card(t, card_id)
    force_dice(t.state, d1, d2)
    events = t.do(Roll(me))
    assert CardDrawn(me, "chance", card_id) in events
    return events


def cash(t: Table) -> list[int]:
    return [p.cash for p in t.state.players]


# -- C4: the deck ----------------------------------------------------------------------------


def test_C4_deck_has_20_cards_shuffled_from_the_seed() -> None:
    cfg = classic()
    assert len(cfg.chance_deck) == 20
    assert [c.id for c in cfg.chance_deck] == list(range(20))
    t = Table(players=4, seed=1)
    shuffles = of(t.events, DeckShuffled)
    assert len(shuffles) == 1 and shuffles[0].deck == "chance"
    assert sorted(shuffles[0].cards) == list(range(20))
    assert t.state.deck == list(shuffles[0].cards)
    assert t.state.deck != list(range(20))  # shuffled
    assert Table(players=4, seed=1).state.deck == t.state.deck
    assert Table(players=4, seed=2).state.deck != t.state.deck


def test_C4_deck_holds_every_effect_kind() -> None:
    effects = {c.effect for c in classic().chance_deck}
    assert effects >= {
        Effect.BANK_PAYS,
        Effect.PAY_BANK,
        Effect.COLLECT_EACH,
        Effect.PAY_EACH,
        Effect.ADVANCE_TO,
        Effect.GO_TO_JAIL,
        Effect.NEAREST_RAILROAD,
        Effect.NEAREST_UTILITY,
        Effect.BACK,
        Effect.REPAIRS,
        Effect.JAIL_FREE,
    }
    targets = {c.target for c in classic().chance_deck if c.effect is Effect.ADVANCE_TO}
    assert {0, 20} <= targets  # Start, Casino (Jail is the GO_TO_JAIL card)


def test_C4_drawn_card_leaves_the_top_of_the_pile() -> None:
    t = Table(players=4, seed=1)
    top_card(t, 10)
    pile = list(t.state.deck)
    draw(t, 10)
    assert t.state.deck == pile[1:]


def test_C4_reshuffle_when_empty_excludes_held_jail_card() -> None:
    t = Table(players=4, seed=1)
    me = t.state.current
    holder = t.state.order[2]
    t.state.deck.remove(JAIL_CARD)
    t.state.players[holder].jail_cards.append(JAIL_CARD)
    t.state.deck.clear()
    place(t.state, me, 0)
    force_dice(t.state, 3, 4)
    counter = t.state.rng_counter
    events = t.do(Roll(me))
    shuffles = of(events, DeckShuffled)
    assert len(shuffles) == 1
    pile = shuffles[0].cards
    assert sorted(pile) == [c for c in range(20) if c != JAIL_CARD]
    # the new order comes from the table's generator, after the two dice
    assert pile == rng.shuffled(tuple(c for c in range(20) if c != JAIL_CARD), t.state.rng_seed, counter + 2)
    drawn = of(events, CardDrawn)
    assert drawn == [CardDrawn(me, "chance", pile[0])]
    assert t.state.deck == list(pile[1:])
    assert JAIL_CARD not in t.state.deck
    assert t.state.players[holder].jail_cards == [JAIL_CARD]


def emptied_pile_with_a_kept_card(holder_offset: int) -> tuple[Table, int]:
    """A pile every card of which was drawn, the Get Out of Jail Free card kept by a seat."""
    t = Table(players=4, seed=1)
    holder = t.state.order[holder_offset]
    t.state.deck.clear()
    t.state.players[holder].jail_cards.append(JAIL_CARD)
    return t, holder


def test_C4_a_kept_card_used_when_the_pile_ran_out_goes_under_the_reshuffled_discards() -> None:
    """Returned to the empty pile as it was, the card would be the whole pile: drawn next for certain,
    the 19 discards never reshuffled in."""
    t, me = emptied_pile_with_a_kept_card(0)
    t.state.players[me].in_jail = True
    counter = t.state.rng_counter
    events = t.do(UseJailCard(me))
    discards = tuple(c for c in range(20) if c != JAIL_CARD)
    assert events == [
        DeckShuffled("chance", rng.shuffled(discards, t.state.rng_seed, counter)),
        LeftJail(me, JailExit.CARD),
    ]
    assert sorted(t.state.deck[:-1]) == list(discards) and t.state.deck[-1] == JAIL_CARD
    assert t.state.players[me].jail_cards == []


def test_C4_a_bankrupt_players_kept_card_goes_under_the_reshuffled_discards() -> None:
    t, holder = emptied_pile_with_a_kept_card(2)
    events = t.do(Leave(holder))  # R3: bankrupt to the bank, the card back to its deck
    assert isinstance(events[0], DeckShuffled) and isinstance(events[1], PlayerBankrupt)
    assert len(t.state.deck) == 20 and t.state.deck[-1] == JAIL_CARD


def test_C4_a_kept_card_returned_to_a_pile_with_cards_goes_to_its_bottom_without_a_shuffle() -> None:
    t, me = emptied_pile_with_a_kept_card(0)
    t.state.deck.extend([3, 5])
    t.state.players[me].in_jail = True
    assert t.do(UseJailCard(me)) == [LeftJail(me, JailExit.CARD)]
    assert t.state.deck == [3, 5, JAIL_CARD]


def test_C4_reshuffle_after_twenty_draws() -> None:
    t = Table(players=2, seed=5)
    pile = list(t.state.deck)
    seen: list[int] = []
    for _ in range(20):
        me = t.state.current
        _free(t)
        place(t.state, me, 0)
        force_dice(t.state, 3, 4)
        events = t.do(Roll(me))  # 0 -> 7, chance
        assert not of(events, DeckShuffled)
        seen += [e.card for e in of(events, CardDrawn)]
        _finish_turn(t, me)
    assert seen == pile  # every card once, in the shuffled order
    assert t.state.deck == []
    holder = [p.seat for p in t.state.players if JAIL_CARD in p.jail_cards]
    assert len(holder) == 1  # the Get Out of Jail Free card is kept, not in the pile
    me = t.state.current
    _free(t)
    place(t.state, me, 0)
    force_dice(t.state, 3, 4)
    events = t.do(Roll(me))
    (shuffle,) = of(events, DeckShuffled)
    assert sorted(shuffle.cards) == [c for c in range(20) if c != JAIL_CARD]
    assert of(events, CardDrawn)[0].card == shuffle.cards[0]


def _free(t: Table) -> None:
    """Take every player out of jail by hand (their kept cards stay kept)."""
    for p in t.state.players:
        if p.in_jail:
            p.in_jail = False
            p.jail_turns = 0


def _finish_turn(t: Table, me: int) -> None:
    """Resolve whatever a card opened with simple choices, then end `me`'s turn."""
    for _ in range(50):
        if t.state.current != me:
            return  # jailed: the turn already passed
        phase = t.state.phase
        actor = t.state.actor
        if phase is Phase.PAYMENT:
            due = t.state.payments[0].amount
            if t.state.players[actor].cash < due:
                set_cash(t, actor, due)
            t.do(Pay(actor))
        elif phase is Phase.BUY:
            t.do(DeclineProperty(actor))
        elif phase is Phase.AUCTION:
            t.do(PassBid(actor))
        elif phase is Phase.CASINO:
            t.do(DeclineBet(actor))
        elif phase is Phase.POST_ROLL:
            t.do(EndTurn(actor))
            return
        else:
            raise AssertionError(f"unexpected phase {phase}")
    raise AssertionError("the turn did not end")


# -- C4: each effect --------------------------------------------------------------------------------


def test_C4_bank_pays_dividend() -> None:
    t = Table(players=4, seed=1)
    me = t.state.current
    before = cash(t)
    events = draw(t, 10)
    assert of(events, BankPaid) == [BankPaid(me, 500, "card")]
    after = cash(t)
    assert after[me] == before[me] + 500
    assert [c for s, c in enumerate(after) if s != me] == [c for s, c in enumerate(before) if s != me]
    assert t.state.phase is Phase.POST_ROLL


@pytest.mark.parametrize(("card_id", "amount"), [(11, 1500), (12, 2000)])
def test_C4_bank_pays_other_amounts(card_id: int, amount: int) -> None:
    t = Table(players=4, seed=1)
    me = t.state.current
    before = t.state.players[me].cash
    events = draw(t, card_id)
    assert of(events, BankPaid) == [BankPaid(me, amount, "card")]
    assert t.state.players[me].cash == before + amount


@pytest.mark.parametrize(("card_id", "amount"), [(13, 150), (14, 1000)])
def test_C4_pay_the_bank(card_id: int, amount: int) -> None:
    t = Table(players=4, seed=1)
    me = t.state.current
    before = cash(t)
    bank_in = t.state.bank_in
    events = draw(t, card_id)
    assert events[-1] == PaymentDue(me, BANK, amount, "card", square=7)
    assert t.state.phase is Phase.PAYMENT and t.state.actor == me
    refused(t, EndTurn(me), "G2")
    assert t.do(Pay(me)) == [PaymentMade(me, BANK, amount, "card", square=7)]
    after = cash(t)
    assert after[me] == before[me] - amount
    assert t.state.bank_in == bank_in + amount
    assert t.state.phase is Phase.POST_ROLL


def test_C4_collect_from_every_player() -> None:
    t = Table(players=4, seed=1)
    me = t.state.current
    others = [s for s in t.state.order if s != me]
    before = cash(t)
    events = draw(t, 15)
    assert of(events, PaymentDue) == [PaymentDue(s, me, 100, "card", square=7) for s in others]
    for s in others:
        assert t.state.phase is Phase.PAYMENT and t.state.actor == s
        t.do(Pay(s))
    after = cash(t)
    assert after[me] == before[me] + 300
    for s in others:
        assert after[s] == before[s] - 100
    assert t.state.phase is Phase.POST_ROLL and t.state.actor == me


def test_C4_collect_skips_bankrupt_players() -> None:
    t = Table(players=3, seed=1)
    first = t.state.current
    place(t.state, first, 0)
    force_dice(t.state, 4, 6)
    t.do(Roll(first))
    t.do(Surrender(first))
    me = t.state.current
    before = cash(t)
    events = draw(t, 15)
    (only,) = [s for s in t.state.order if s not in (me, first)]
    assert of(events, PaymentDue) == [PaymentDue(only, me, 100, "card", square=7)]
    t.do(Pay(only))
    assert t.state.players[me].cash == before[me] + 100


def test_C4_pay_every_player() -> None:
    t = Table(players=4, seed=1)
    me = t.state.current
    others = [s for s in t.state.order if s != me]
    before = cash(t)
    events = draw(t, 16)
    assert of(events, PaymentDue) == [PaymentDue(me, s, 500, "card", square=7) for s in others]
    for _ in others:
        assert t.state.actor == me
        t.do(Pay(me))
    after = cash(t)
    assert after[me] == before[me] - 1500
    for s in others:
        assert after[s] == before[s] + 500
    assert t.state.phase is Phase.POST_ROLL


def test_C4_advance_to_named_property_without_passing_start() -> None:
    t = Table(players=4, seed=1)
    me = t.state.current
    before = t.state.players[me].cash
    events = draw(t, 3)  # Quantix (39) from 7
    assert Moved(me, 7, 39) in events
    assert not of(events, BankPaid)
    assert events[-1] == PurchaseOffered(me, 39, 4000)
    assert t.state.players[me].cash == before
    assert t.state.phase is Phase.BUY


def test_C4_advance_to_named_property_passing_start_pays_salary() -> None:
    t = Table(players=4, seed=1)
    me = t.state.current
    before = t.state.players[me].cash
    events = draw(t, 5, chance=36)  # Threadline (11) from 36
    assert Moved(me, 36, 11) in events
    assert of(events, BankPaid) == [BankPaid(me, SALARY, "salary")]
    assert t.state.players[me].cash == before + SALARY
    assert events[-1] == PurchaseOffered(me, 11, 1400)


def test_C4_advance_to_owned_property_pays_normal_rent() -> None:
    t = Table(players=4, seed=1)
    me = t.state.current
    owner = t.state.order[1]
    give(t.state, owner, 24)
    events = draw(t, 4)  # Cloudhop (24) from 7
    assert events[-1] == PaymentDue(me, owner, 200, "rent", square=24)


def test_C4_advance_to_finance_company_by_name() -> None:
    t = Table(players=4, seed=1)
    me = t.state.current
    events = draw(t, 6, chance=22)  # Ledger Bank (5) from 22, passing start
    assert Moved(me, 22, 5) in events
    assert of(events, BankPaid) == [BankPaid(me, SALARY, "salary")]
    assert events[-1] == PurchaseOffered(me, 5, 2000)


def test_C4_advance_to_start_pays_salary_and_bonus() -> None:
    t = Table(players=4, seed=1)
    me = t.state.current
    before = t.state.players[me].cash
    events = draw(t, 0, chance=22)
    assert Moved(me, 22, 0) in events
    assert of(events, BankPaid) == [BankPaid(me, SALARY, "salary"), BankPaid(me, BONUS, "start_bonus")]
    assert t.state.players[me].cash == before + SALARY + BONUS


def test_C4_trip_to_casino_opens_the_bet() -> None:
    t = Table(players=4, seed=1)
    me = t.state.current
    events = draw(t, 2)  # from 7 to 20
    assert Moved(me, 7, 20) in events
    assert events[-1] == CasinoOpened(me)
    assert t.state.phase is Phase.CASINO and t.state.actor == me


def test_C4_go_to_jail_card() -> None:
    t = Table(players=4, seed=1)
    me = t.state.current
    events = draw(t, 1, chance=36)
    assert of(events, SentToJail) == [SentToJail(me, "card")]
    assert not of(events, BankPaid)
    assert t.state.players[me].position == 10 and t.state.players[me].in_jail
    assert t.state.current != me


@pytest.mark.parametrize(("chance", "railroad", "passes_start"), [(7, 15, False), (22, 25, False), (36, 5, True)])
def test_C4_nearest_finance_company_pays_twice_the_rent(chance: int, railroad: int, passes_start: bool) -> None:
    t = Table(players=4, seed=1)
    me = t.state.current
    owner = t.state.order[1]
    give(t.state, owner, railroad)
    events = draw(t, 7, chance=chance)
    assert Moved(me, chance, railroad) in events
    assert (BankPaid(me, SALARY, "salary") in events) is passes_start
    assert events[-1] == PaymentDue(me, owner, 2 * 250, "rent", square=railroad)
    before = cash(t)
    t.do(Pay(me))
    assert t.state.players[owner].cash == before[owner] + 500


def test_C4_nearest_finance_company_twice_rent_with_two_owned() -> None:
    t = Table(players=4, seed=1)
    me = t.state.current
    owner = t.state.order[2]
    give(t.state, owner, 15, 35)
    events = draw(t, 7)
    assert events[-1] == PaymentDue(me, owner, 2 * 500, "rent", square=15)


def test_C4_nearest_finance_company_unowned_is_offered() -> None:
    t = Table(players=4, seed=1)
    me = t.state.current
    events = draw(t, 7)
    assert events[-1] == PurchaseOffered(me, 15, 2000)
    assert t.state.phase is Phase.BUY


def test_C4_nearest_finance_company_own_no_rent() -> None:
    t = Table(players=4, seed=1)
    me = t.state.current
    give(t.state, me, 15)
    events = draw(t, 7)
    assert not of(events, PaymentDue)
    assert t.state.phase is Phase.POST_ROLL


@pytest.mark.parametrize(("chance", "utility"), [(7, 12), (22, 28), (36, 12)])
def test_C4_nearest_industry(chance: int, utility: int) -> None:
    t = Table(players=4, seed=1)
    me = t.state.current
    owner = t.state.order[1]
    give(t.state, owner, utility)
    events = draw(t, 8, chance=chance)
    assert Moved(me, chance, utility) in events
    assert (BankPaid(me, SALARY, "salary") in events) is (chance == 36)
    # the card's rent: the dice x the higher multiplier (x100 online), even with one industry owned
    d1, d2 = t.state.dice
    assert events[-1] == PaymentDue(me, owner, (d1 + d2) * 100, "rent", square=utility)


def test_C4_nearest_industry_unowned_is_offered() -> None:
    t = Table(players=4, seed=1)
    me = t.state.current
    events = draw(t, 8)
    assert events[-1] == PurchaseOffered(me, 12, 1500)


def test_C4_back_three_squares_resolves_the_new_square() -> None:
    t = Table(players=4, seed=1)
    me = t.state.current
    events = draw(t, 9)  # 7 -> 4, income tax
    assert of(events, Moved)[-1] == Moved(me, 7, 4)
    assert events[-1] == PaymentDue(me, BANK, 2000, "tax", square=4)


def test_C4_back_three_squares_behind_start_pays_no_salary() -> None:
    t = Table(players=4, seed=1)
    me = t.state.current
    before = t.state.players[me].cash
    events = draw(t, 9, chance=2)  # 37 -> 2 (passing start: salary), then back to 39: no second salary
    assert of(events, Moved) == [Moved(me, 37, 2), Moved(me, 2, 39)]
    assert of(events, BankPaid) == [BankPaid(me, SALARY, "salary")]
    assert t.state.players[me].cash == before + SALARY
    assert events[-1] == PurchaseOffered(me, 39, 4000)


def test_C4_back_three_squares_onto_go_to_jail() -> None:
    t = Table(players=4, seed=1)
    me = t.state.current
    events = draw(t, 9, chance=33)
    assert Moved(me, 33, 30) in events
    assert of(events, SentToJail) == [SentToJail(me, "go_to_jail")]
    assert t.state.current != me


def _build_estate(t: Table, seat: int) -> None:
    """Supermarkets: 4 branches + a corporation; coffee: 3 branches (7 branches, 1 corporation)."""
    give(t.state, seat, 1, 3, 6, 8, 9, 15)
    t.state.buildings[1] = 4
    t.state.buildings[3] = 5
    for sq in (6, 8, 9):
        t.state.buildings[sq] = 1


@pytest.mark.parametrize(("card_id", "due"), [(17, 7 * 250 + 1000), (18, 7 * 400 + 1150)])
def test_C4_repairs_by_branches_and_corporations(card_id: int, due: int) -> None:
    t = Table(players=4, seed=1)
    me = t.state.current
    _build_estate(t, me)
    before = t.state.players[me].cash
    events = draw(t, card_id)
    assert events[-1] == PaymentDue(me, BANK, due, "repairs", square=7)
    t.do(Pay(me))
    assert t.state.players[me].cash == before - due


def test_C4_repairs_count_only_own_buildings() -> None:
    t = Table(players=4, seed=1)
    me = t.state.current
    _build_estate(t, t.state.order[1])
    before = t.state.players[me].cash
    events = draw(t, 17)
    assert not of(events, PaymentDue)
    assert t.state.players[me].cash == before
    assert t.state.phase is Phase.POST_ROLL


def test_C4_jail_card_is_kept_then_used_and_returned_to_the_bottom() -> None:
    t = Table(players=2, seed=1)
    me = t.state.current
    other = t.state.order[1]
    events = draw(t, JAIL_CARD)
    assert t.types(events) == ["DiceRolled", "Moved", "CardDrawn"]
    assert t.state.players[me].jail_cards == [JAIL_CARD]
    assert JAIL_CARD not in t.state.deck
    assert len(t.state.deck) == 19
    assert t.state.phase is Phase.POST_ROLL
    t.do(EndTurn(me))
    # the other player's turn, then the holder goes to jail by the Go to Jail square
    place(t.state, other, 0)
    force_dice(t.state, 4, 6)
    t.do(Roll(other))
    t.do(EndTurn(other))
    place(t.state, me, 24)
    force_dice(t.state, 2, 4)
    t.do(Roll(me))
    assert t.state.players[me].in_jail
    place(t.state, other, 0)
    force_dice(t.state, 4, 6)
    t.do(Roll(other))
    t.do(EndTurn(other))
    assert t.state.current == me
    assert UseJailCard(me) in legal_commands(t.state, me)
    assert t.do(UseJailCard(me)) == [LeftJail(me, "card", 0)]
    assert t.state.players[me].jail_cards == []
    assert not t.state.players[me].in_jail
    assert t.state.deck[-1] == JAIL_CARD and len(t.state.deck) == 20
    force_dice(t.state, 1, 2)
    events = t.do(Roll(me))
    assert events[1] == Moved(me, 10, 13)


def test_C4_held_jail_card_stays_out_of_the_reshuffle() -> None:
    t = Table(players=2, seed=1)
    me = t.state.current
    draw(t, JAIL_CARD)
    t.state.players[me].in_jail = True  # by hand: no need to walk there
    t.state.players[me].position = 10
    t.do(EndTurn(me))
    other = t.state.current
    t.state.deck.clear()
    place(t.state, other, 0)
    force_dice(t.state, 3, 4)
    events = t.do(Roll(other))
    (shuffle,) = of(events, DeckShuffled)
    assert JAIL_CARD not in shuffle.cards and len(shuffle.cards) == 19


# -- C5: a card payment beyond cash ---------------------------------------------------------------------


def test_C5_card_payment_beyond_cash_opens_debt_resolution() -> None:
    t = Table(players=4, seed=1)
    me = t.state.current
    give(t.state, me, 39)
    set_cash(t, me, 100)
    events = draw(t, 14)  # hospital fees $1,000
    assert events[-1] == PaymentDue(me, BANK, 1000, "card", square=7)
    assert t.state.phase is Phase.PAYMENT and t.state.actor == me
    assert not t.state.players[me].bankrupt
    err = refused(t, Pay(me), "D1")
    assert "1000" in err.message
    refused(t, EndTurn(me), "G2")
    refused(t, Roll(me), "G2")
    legal = legal_commands(t.state, me)
    assert Pay(me) not in legal and Mortgage(me, 39) in legal
    t.do(Mortgage(me, 39))
    assert t.state.players[me].cash == 2100
    assert t.do(Pay(me)) == [PaymentMade(me, BANK, 1000, "card", square=7)]
    assert t.state.players[me].cash == 1100
    assert t.state.phase is Phase.POST_ROLL


def test_C5_pay_each_beyond_cash_opens_debt_resolution() -> None:
    t = Table(players=3, seed=1)
    me = t.state.current
    give(t.state, me, 37)
    set_cash(t, me, 600)
    draw(t, 16)  # pay each of two players $500
    assert t.state.phase is Phase.PAYMENT and t.state.actor == me
    assert len(t.state.payments) == 2
    t.do(Pay(me))
    assert t.state.players[me].cash == 100
    refused(t, Pay(me), "D1")
    t.do(Mortgage(me, 37))
    t.do(Pay(me))
    assert t.state.players[me].cash == 100 + 1750 - 500
    assert t.state.phase is Phase.POST_ROLL


def test_C5_repairs_beyond_cash_opens_debt_resolution() -> None:
    t = Table(players=4, seed=1)
    me = t.state.current
    _build_estate(t, me)
    set_cash(t, me, 1000)
    draw(t, 17)
    due = 7 * 250 + 1000
    assert t.state.payments[0].amount == due
    refused(t, Pay(me), "D1")
    t.do(SellBuilding(me, 3))  # the corporation: $500 back (online sells at full cost)
    t.do(SellBuilding(me, 1))
    t.do(Mortgage(me, 15))
    assert t.state.players[me].cash == 1000 + 500 + 500 + 1000
    t.do(Pay(me))
    assert t.state.players[me].cash == 3000 - due


def test_C5_collect_each_debtor_short_of_cash_resolves_their_debt() -> None:
    t = Table(players=3, seed=1)
    me = t.state.current
    poor = t.state.order[1]
    rich = t.state.order[2]
    give(t.state, poor, 1)
    set_cash(t, poor, 50)
    before = t.state.players[me].cash
    draw(t, 15)
    assert t.state.actor == poor and t.state.phase is Phase.PAYMENT
    refused(t, Pay(poor), "D1")
    refused(t, Pay(rich), "D1")  # not rich's turn to pay yet
    t.do(Mortgage(poor, 1))
    t.do(Pay(poor))
    assert t.state.players[poor].cash == 50 + 300 - 100
    assert t.state.actor == rich
    t.do(Pay(rich))
    assert t.state.players[me].cash == before + 200
    assert t.state.phase is Phase.POST_ROLL and t.state.actor == me


def test_C5_card_payment_that_cannot_be_raised_is_bankruptcy_to_the_bank() -> None:
    t = Table(players=4, seed=1)
    me = t.state.current
    set_cash(t, me, 100)
    events = draw(t, 14)
    assert of(events, PlayerBankrupt) == [PlayerBankrupt(me, BANK, 4)]
    assert t.state.players[me].bankrupt
    assert t.state.current != me


def test_C5_collect_each_from_a_player_who_cannot_raise_it_bankrupts_them_to_the_drawer() -> None:
    t = Table(players=3, seed=1)
    me = t.state.current
    broke = t.state.order[1]
    payer = t.state.order[2]
    set_cash(t, broke, 40)
    before = t.state.players[me].cash
    events = draw(t, 15)
    assert PlayerBankrupt(broke, me, 3) in events
    assert t.state.players[broke].bankrupt and t.state.players[broke].cash == 0
    assert t.state.players[me].cash == before + 40  # D3: the creditor gets the cash
    assert of(events, PaymentDue) == [PaymentDue(payer, me, 100, "card", square=7)]
    assert t.state.actor == payer
    t.do(Pay(payer))
    assert t.state.players[me].cash == before + 140
    assert t.state.current == me and t.state.phase is Phase.POST_ROLL
