"""D1-D5: mandatory payments, debt resolution, bankruptcy and the end of the game (online, Classic)."""

from __future__ import annotations

import pytest

import engine
from engine import (
    BANK,
    AuctionSettled,
    Bid,
    BuildingSold,
    BuyProperty,
    CardDrawn,
    DeclineProperty,
    EndTurn,
    GameEnded,
    Mortgage,
    PassBid,
    Pay,
    PaymentDue,
    PaymentMade,
    Phase,
    PlayerBankrupt,
    PropertyMortgaged,
    PurchaseOffered,
    Roll,
    SellBuilding,
    Surrender,
    TurnEnded,
    TurnStarted,
    check_invariants,
)

from .helpers import Table, force_dice, give, place, refused, set_cash

BIRTHDAY = 15  # chance card: collect $100 from every player
JAIL_FREE = 19


def mortgage_by_hand(state: engine.TableState, *squares: int) -> None:
    for sq in squares:
        state.mortgaged_round[sq] = state.round


def table_with_tech_owner() -> tuple[Table, int, int]:
    """Seed 1, 4 players: order [1, 2, 3, 0]; seat 2 owns the whole tech group (37, 39), unbuilt.

    Returns the table, the current seat (the future debtor) and the creditor seat."""
    t = Table(4, seed=1)
    debtor = t.state.current
    creditor = t.state.order[1]
    assert (debtor, creditor) == (1, 2)
    give(t.state, creditor, 37, 39)
    return t, debtor, creditor


def land_on_39(t: Table, seat: int) -> list[engine.Event]:
    place(t.state, seat, 34)
    force_dice(t.state, 2, 3)
    return t.do(Roll(seat))


# -- D1: debt resolution ---------------------------------------------------------------


def test_D1_rent_beyond_cash_opens_debt_resolution_and_pay_is_refused_until_raised() -> None:
    t, debtor, creditor = table_with_tech_owner()
    give(t.state, debtor, 5, 15)
    set_cash(t.state, debtor, 100)
    events = land_on_39(t, debtor)
    rent = 2 * 500  # P3: the whole group doubles the unbuilt rent of $500
    assert events[-1] == PaymentDue(debtor, creditor, rent, "rent", square=39)
    assert t.state.phase is Phase.PAYMENT
    assert t.state.actor == debtor
    legal = engine.legal_commands(t.state, debtor)
    assert Pay(debtor) not in legal
    for command in (Mortgage(debtor, 5), Mortgage(debtor, 15), Surrender(debtor)):
        assert command in legal
    refused(t, Pay(debtor), "D1")
    refused(t, EndTurn(debtor), "G2")
    refused(t, Roll(debtor), "G2")

    assert t.do(Mortgage(debtor, 5)) == [PropertyMortgaged(debtor, 5, 1000)]
    assert t.state.phase is Phase.PAYMENT  # still owed: the mortgage only raised the cash
    assert Pay(debtor) in engine.legal_commands(t.state, debtor)
    creditor_cash = t.state.players[creditor].cash
    assert t.do(Pay(debtor)) == [PaymentMade(debtor, creditor, rent, "rent", square=39)]
    assert t.state.players[debtor].cash == 100
    assert t.state.players[creditor].cash == creditor_cash + rent
    assert t.state.phase is Phase.POST_ROLL
    t.do(EndTurn(debtor))
    assert t.state.current == creditor


def test_D1_pay_is_refused_while_cash_is_still_short_after_partial_raising() -> None:
    t, debtor, _ = table_with_tech_owner()
    give(t.state, debtor, 1, 3, 5)
    set_cash(t.state, debtor, 100)
    land_on_39(t, debtor)  # raisable 100 + 300 + 300 + 1000 = 1700 >= 1000
    t.do(Mortgage(debtor, 1))
    refused(t, Pay(debtor), "D1")  # $400 < $1,000
    t.do(Mortgage(debtor, 3))
    refused(t, Pay(debtor), "D1")  # $700 < $1,000
    t.do(Mortgage(debtor, 5))
    t.do(Pay(debtor))
    assert t.state.players[debtor].cash == 700
    assert t.state.phase is Phase.POST_ROLL


def test_D1_selling_buildings_raises_the_cash_for_a_debt() -> None:
    t, debtor, _ = table_with_tech_owner()
    give(t.state, debtor, 1, 3)
    t.state.buildings[1] = t.state.buildings[3] = 2  # sale value $500 each (online: full cost)
    set_cash(t.state, debtor, 100)
    land_on_39(t, debtor)  # owes $1,000; raisable 100 + 4 * 500 + 600 = 2700
    assert t.state.phase is Phase.PAYMENT
    refused(t, Mortgage(debtor, 1), "M1")  # the group's buildings must be sold first
    assert t.do(SellBuilding(debtor, 1)) == [BuildingSold(debtor, 1, 1, 500)]
    refused(t, SellBuilding(debtor, 1), "P6")  # sell evenly
    refused(t, Pay(debtor), "D1")  # $600 < $1,000
    t.do(SellBuilding(debtor, 3))
    t.do(Pay(debtor))
    assert t.state.players[debtor].cash == 100
    assert t.state.buildings[1] == t.state.buildings[3] == 1


def test_D1_tax_beyond_cash_is_owed_to_the_bank() -> None:
    t = Table(4, seed=1)
    seat = t.state.current
    give(t.state, seat, 5, 15)
    set_cash(t.state, seat, 500)
    force_dice(t.state, 1, 3)  # 0 -> 4, income tax $2,000
    events = t.do(Roll(seat))
    assert events[-1] == PaymentDue(seat, BANK, 2000, "tax", square=4)
    refused(t, Pay(seat), "D1")
    t.do(Mortgage(seat, 5))
    refused(t, Pay(seat), "D1")
    t.do(Mortgage(seat, 15))
    bank_in = t.state.bank_in
    t.do(Pay(seat))
    assert t.state.bank_in == bank_in + 2000
    assert t.state.players[seat].cash == 500


def test_D1_a_won_auction_beyond_cash_is_a_mandatory_payment() -> None:
    t = Table(4, seed=1)
    lander, winner = t.state.order[0], t.state.order[1]
    set_cash(t.state, winner, 1000)
    give(t.state, winner, 5, 15, 25, 35)  # raisable 1000 + 4 * 1000
    place(t.state, lander, 34)
    force_dice(t.state, 2, 3)
    assert t.do(Roll(lander))[-1] == PurchaseOffered(lander, 39, 4000)
    t.do(DeclineProperty(lander))
    t.do(Bid(winner, 4000))
    for seat in t.state.order[2:]:
        t.do(PassBid(seat))
    assert AuctionSettled in [type(e) for e in t.events[-3:]]
    assert t.events[-1] == PaymentDue(winner, BANK, 4000, "auction", square=39)
    assert t.state.owner[39] == winner
    assert t.state.actor == winner
    refused(t, Pay(winner), "D1")
    for sq in (5, 15, 25):
        t.do(Mortgage(winner, sq))
    t.do(Pay(winner))
    assert t.state.players[winner].cash == 0
    assert t.state.actor == lander
    assert t.state.phase is Phase.POST_ROLL


def test_D1_D2_debt_equal_to_everything_raisable_is_not_bankruptcy() -> None:
    t, debtor, _ = table_with_tech_owner()
    give(t.state, debtor, 5)
    set_cash(t.state, debtor, 0)  # raisable exactly 1000 = the rent
    events = land_on_39(t, debtor)
    assert isinstance(events[-1], PaymentDue)
    assert not t.state.players[debtor].bankrupt
    t.do(Mortgage(debtor, 5))
    t.do(Pay(debtor))
    assert t.state.players[debtor].cash == 0


# -- D2: bankruptcy --------------------------------------------------------------------


def test_D2_debt_beyond_everything_raisable_is_immediate_bankruptcy() -> None:
    t, debtor, creditor = table_with_tech_owner()
    t.state.buildings[37], t.state.buildings[39] = 4, 5  # hotel on 39: rent $20,000
    give(t.state, debtor, 5)
    set_cash(t.state, debtor, 300)  # raisable 300 + 1000 << 20000
    creditor_cash = t.state.players[creditor].cash
    events = land_on_39(t, debtor)
    assert PaymentDue not in [type(e) for e in events]
    assert PlayerBankrupt(debtor, creditor, 4) in events
    assert t.state.players[debtor].bankrupt
    assert t.state.players[debtor].cash == 0
    assert t.state.players[creditor].cash == creditor_cash + 300
    assert t.state.owner[5] == creditor
    # the bankrupt player's turn is over
    assert events[-2:] == [TurnEnded(debtor), TurnStarted(creditor, 1)]
    assert t.state.active_seats == [2, 3, 0]


def test_D2_one_dollar_short_of_raisable_is_bankruptcy() -> None:
    t, debtor, creditor = table_with_tech_owner()
    give(t.state, debtor, 1, 3)  # mortgage values 300 + 300
    set_cash(t.state, debtor, 399)  # raisable 999 < rent 1000
    events = land_on_39(t, debtor)
    assert PlayerBankrupt(debtor, creditor, 4) in events
    assert PaymentDue not in [type(e) for e in events]
    assert t.state.owner[1] == t.state.owner[3] == creditor
    assert t.state.players[creditor].cash == 15000 + 399


def test_D2_surrender_in_debt_resolution_goes_bankrupt_to_the_creditor() -> None:
    t, debtor, creditor = table_with_tech_owner()
    give(t.state, debtor, 5)
    set_cash(t.state, debtor, 600)
    land_on_39(t, debtor)
    assert t.state.phase is Phase.PAYMENT
    creditor_cash = t.state.players[creditor].cash
    events = t.do(Surrender(debtor))
    assert events[0] == PlayerBankrupt(debtor, creditor, 4, "surrender")
    assert t.state.players[debtor].bankrupt and t.state.players[debtor].place == 4
    assert t.state.players[creditor].cash == creditor_cash + 600
    assert t.state.owner[5] == creditor
    assert t.state.payments == []
    assert t.state.current == creditor
    assert t.state.phase is Phase.PRE_ROLL


def test_D2_surrender_without_a_debt_goes_bankrupt_to_the_bank() -> None:
    t = Table(4, seed=1)
    seat = t.state.current
    give(t.state, seat, 5, 6, 8, 9)
    t.state.buildings[6] = t.state.buildings[8] = t.state.buildings[9] = 1
    cash, bank_in = t.state.players[seat].cash, t.state.bank_in
    events = t.do(Surrender(seat))
    assert events[0] == PlayerBankrupt(seat, BANK, 4, "surrender")
    assert t.state.bank_in == bank_in + cash
    for sq in (5, 6, 8, 9):
        assert t.state.owner[sq] == BANK
        assert t.state.buildings[sq] == 0
    assert t.state.current == t.state.order[1]


def test_D2_surrender_only_by_the_seat_that_must_act() -> None:
    t = Table(4, seed=1)
    other = t.state.order[2]
    refused(t, Surrender(other), "D2")


@pytest.mark.parametrize(
    ("mode", "players", "order", "broke", "chance", "chest", "end"),
    [
        # H4: the 6-page Short Game ends at the first bankruptcy; seat 2 would have been charged after it
        ("hasbro-short-6", 3, None, (1,), None, (108,), "short_game"),
        ("hasbro-short-6", 3, None, (1, 2), None, (108,), "short_game"),  # and bankrupted after the end
        # X4: the second opponent's bankruptcy leaves one team; seat 2 (the drawer's teammate) comes after
        ("team", 4, (0, 3, 1, 2), (3, 1), (BIRTHDAY,), None, "last_team"),
    ],
)
def test_C2_C4_D5_collecting_from_every_player_stops_when_a_payers_bankruptcy_ends_the_game(
    mode: str,
    players: int,
    order: tuple[int, ...] | None,
    broke: tuple[int, ...],
    chance: tuple[int, ...] | None,
    chest: tuple[int, ...] | None,
    end: str,
) -> None:
    """The game ends once: nothing is charged, and nobody goes bankrupt, after its GameEnded."""
    cfg = engine.preset(mode)
    square = 17 if chest else 7  # a Community Chest square from 14, a Chance square from 4
    scenario = engine.Scenario(
        players=tuple("abcd"[:players]),
        mode=mode,
        order=order or (),
        cash=dict.fromkeys(broke, 0),
        positions={0: square - 3},
        chance=chance if chance is None else (*chance, *(c.id for c in cfg.chance_deck if c.id not in chance)),
        chest=chest if chest is None else (*chest, *(c.id for c in cfg.chest_deck if c.id not in chest)),
        dice=((1, 2),),
    )
    state = scenario.state()
    events = engine.apply(state, Roll(0))
    ended = [i for i, e in enumerate(events) if isinstance(e, GameEnded)]
    assert len(ended) == 1 and events[ended[0]].reason == end
    assert ended[0] == len(events) - 1, events[ended[0] :]
    assert state.finished and not state.payments
    check_invariants(state)


def test_D2_a_poor_player_charged_by_a_birthday_card_goes_bankrupt_to_the_drawer() -> None:
    t = Table(4, seed=1)
    drawer = t.state.current  # order [1, 2, 3, 0]
    poor = 3
    set_cash(t.state, poor, 50)
    t.state.deck.remove(BIRTHDAY)
    t.state.deck.insert(0, BIRTHDAY)
    place(t.state, drawer, 12)
    force_dice(t.state, 2, 3)  # -> 17, chance
    events = t.do(Roll(drawer))
    assert CardDrawn(drawer, "chance", BIRTHDAY) in events
    assert PlayerBankrupt(poor, drawer, 4) in events
    assert [e for e in events if isinstance(e, PaymentDue)] == [
        PaymentDue(2, drawer, 100, "card", square=17),
        PaymentDue(0, drawer, 100, "card", square=17),
    ]
    drawer_cash = t.state.players[drawer].cash
    assert drawer_cash == 15000 + 50
    assert t.state.actor == 2
    t.do(Pay(2))
    assert t.state.actor == 0
    t.do(Pay(0))
    assert t.state.actor == drawer
    assert t.state.players[drawer].cash == drawer_cash + 200
    assert t.state.phase is Phase.POST_ROLL
    t.do(EndTurn(drawer))
    assert t.state.current == 2  # seat 3 is skipped from now on
    assert 3 not in t.state.active_seats


# -- D3: bankrupt to a player --------------------------------------------------------------


def test_D3_bankrupt_to_a_player_creditor_gets_cash_and_properties_buildings_sold_to_the_bank_first() -> None:
    t, debtor, creditor = table_with_tech_owner()
    t.state.buildings[37], t.state.buildings[39] = 4, 5  # hotel on 39: rent $20,000
    give(t.state, debtor, 1, 3, 5, 12)
    t.state.buildings[1] = t.state.buildings[3] = 1  # $500 each back from the bank
    mortgage_by_hand(t.state, 5)
    t.state.players[debtor].jail_cards.append(t.state.deck.pop(t.state.deck.index(JAIL_FREE)))
    set_cash(t.state, debtor, 1000)
    creditor_cash = t.state.players[creditor].cash
    bank_out = t.state.bank_out
    events = land_on_39(t, debtor)
    assert PlayerBankrupt(debtor, creditor, 4) in events
    for sq in (1, 3, 5, 12):
        assert t.state.owner[sq] == creditor
    assert t.state.buildings[1] == t.state.buildings[3] == 0
    assert t.state.players[creditor].cash == creditor_cash + 1000 + 2 * 500
    assert t.state.bank_out == bank_out + 2 * 500  # the buildings were sold to the bank
    debtor_state = t.state.players[debtor]
    assert debtor_state.cash == 0 and debtor_state.bankrupt and not debtor_state.jail_cards
    assert JAIL_FREE in t.state.deck
    assert t.state.owner.count(debtor) == 0


def test_D3_surrendering_a_debt_to_a_player_hands_over_buildings_value_and_properties() -> None:
    t, debtor, creditor = table_with_tech_owner()
    give(t.state, debtor, 6, 8, 9)
    t.state.buildings[6] = t.state.buildings[8] = t.state.buildings[9] = 2  # 6 x $500
    set_cash(t.state, debtor, 200)
    land_on_39(t, debtor)
    assert t.state.phase is Phase.PAYMENT
    creditor_cash = t.state.players[creditor].cash
    t.do(Surrender(debtor))
    assert t.state.players[creditor].cash == creditor_cash + 200 + 6 * 500
    assert [t.state.owner[sq] for sq in (6, 8, 9)] == [creditor] * 3
    assert [t.state.buildings[sq] for sq in (6, 8, 9)] == [0, 0, 0]


# -- D4: bankrupt to the bank ------------------------------------------------------------------


def test_D4_bankrupt_to_the_bank_properties_unowned_without_buildings_or_mortgages() -> None:
    t = Table(4, seed=1)
    seat = t.state.current
    give(t.state, seat, 1, 3, 5)
    t.state.buildings[1] = t.state.buildings[3] = 1
    mortgage_by_hand(t.state, 5)
    t.state.players[seat].jail_cards.append(t.state.deck.pop(t.state.deck.index(JAIL_FREE)))
    set_cash(t.state, seat, 100)  # raisable 100 + 2 * 500 + 2 * 300 = 1700 < $2,000 tax
    bank_in = t.state.bank_in
    force_dice(t.state, 1, 3)
    events = t.do(Roll(seat))
    assert PlayerBankrupt(seat, BANK, 4) in events
    assert PaymentDue not in [type(e) for e in events]
    for sq in (1, 3, 5):
        assert t.state.owner[sq] == BANK
        assert t.state.buildings[sq] == 0
        assert t.state.mortgaged_round[sq] == -1
    assert t.state.bank_in == bank_in + 100
    assert t.state.players[seat].cash == 0
    assert JAIL_FREE in t.state.deck

    # the returned properties are for sale again
    nxt = t.state.current
    place(t.state, nxt, 0)
    force_dice(t.state, 2, 3)
    assert t.do(Roll(nxt))[-1] == PurchaseOffered(nxt, 5, 2000)
    t.do(BuyProperty(nxt))
    assert t.state.owner[5] == nxt and t.state.mortgaged_round[5] == -1


def test_D4_a_card_payment_beyond_raisable_goes_bankrupt_to_the_bank() -> None:
    t = Table(4, seed=1)
    seat = t.state.current
    hospital = 14  # pay $1,000 to the bank
    t.state.deck.remove(hospital)
    t.state.deck.insert(0, hospital)
    give(t.state, seat, 6)
    set_cash(t.state, seat, 400)  # raisable 400 + 500 = 900 < 1000
    place(t.state, seat, 12)
    force_dice(t.state, 2, 3)
    events = t.do(Roll(seat))
    assert PlayerBankrupt(seat, BANK, 4) in events
    assert t.state.owner[6] == BANK


# -- D5: the end --------------------------------------------------------------------------


def test_D5_the_last_player_remaining_wins() -> None:
    t = Table(2, seed=3)
    loser = t.state.current
    winner = next(s for s in t.state.order if s != loser)
    give(t.state, winner, 37, 39)
    set_cash(t.state, loser, 10)
    place(t.state, loser, 34)
    force_dice(t.state, 2, 3)
    events = t.do(Roll(loser))
    places = [0, 0]
    places[winner], places[loser] = 1, 2
    assert events[-2:] == [PlayerBankrupt(loser, winner, 2), GameEnded(winner, tuple(places), "last_player")]
    assert t.state.finished and t.state.winner == winner and t.state.end_reason == "last_player"
    assert t.state.phase is Phase.GAME_OVER
    assert t.state.actor == -1
    assert engine.legal_commands(t.state, winner) == engine.legal_commands(t.state, loser) == []
    refused(t, Roll(winner), "D5")
    refused(t, EndTurn(winner), "D5")
    refused(t, Surrender(winner), "D5")


def test_D5_elimination_order_gives_the_places() -> None:
    t = Table(4, seed=1)
    assert t.state.order == [1, 2, 3, 0]
    assert t.do(Surrender(1))[0] == PlayerBankrupt(1, BANK, 4, "surrender")
    assert t.state.current == 2
    assert t.do(Surrender(2))[0] == PlayerBankrupt(2, BANK, 3, "surrender")
    assert t.state.current == 3
    events = t.do(Surrender(3))
    assert events == [PlayerBankrupt(3, BANK, 2, "surrender"), GameEnded(0, (1, 4, 3, 2), "last_player")]
    assert t.state.eliminated == [1, 2, 3]
    assert [p.place for p in t.state.players] == [1, 4, 3, 2]
    assert t.replay_matches()


def test_D5_places_when_eliminations_happen_in_play_and_out_of_turn() -> None:
    t = Table(3, seed=5)
    first, second, third = t.state.order
    # the second seat surrenders on its own turn after the first passes
    force_dice(t.state, 1, 2)
    t.do(Roll(first))
    while t.state.phase is not Phase.POST_ROLL:
        legal = engine.legal_commands(t.state, t.state.actor)
        t.do(next(c for c in legal if not isinstance(c, Surrender) and not isinstance(c, BuyProperty)))
    t.do(EndTurn(first))
    assert t.state.current == second
    assert t.do(Surrender(second))[0] == PlayerBankrupt(second, BANK, 3, "surrender")
    assert t.state.current == third
    events = t.do(Surrender(third))
    expected = [0, 0, 0]
    expected[first], expected[second], expected[third] = 1, 3, 2
    assert events[-1] == GameEnded(first, tuple(expected), "last_player")


def test_D1_E2_the_next_debtor_gets_its_own_debt_timer_when_the_one_before_goes_bankrupt() -> None:
    """A birthday card: every other player owes the drawer. The first debtor surrenders; the next one
    (short of cash, with a square to mortgage) gets the 60 s debt timer, and at its end the game
    mortgages that debtor's square and pays from it; the drawer misses no turn."""
    t = Table(4, seed=1)
    drawer = t.state.current
    first, second = t.state.order[1], t.state.order[2]
    set_cash(t.state, second, 60)
    give(t.state, second, 5)
    t.state.deck.remove(BIRTHDAY)
    t.state.deck.insert(0, BIRTHDAY)
    place(t.state, drawer, 12)
    force_dice(t.state, 2, 3)
    t.do(Roll(drawer))
    assert [p.debtor for p in t.state.payments][:2] == [first, second]
    t.do(engine.Tick(10_000))
    t.do(Surrender(first))
    due = t.state.payments[0]
    assert due.debtor == second and due.deadline == 10_000 + 60_000
    events = t.do(engine.Tick(due.deadline))
    assert PropertyMortgaged(second, 5, 1000) in events
    assert PaymentMade(second, drawer, 100, "card", square=17) in events
    assert t.state.players[second].cash == 60 + 1000 - 100
    assert t.state.missed[drawer] == 0


def test_D1_a_trade_proposed_in_debt_resolution_is_answered_on_the_debts_timer() -> None:
    """The debt came late in the turn (its turn timer ran out meanwhile): the proposal the debtor makes
    in its 60 s is not declined by the turn's timer at once; it is open until the debt's deadline."""
    t = Table(3, seed=1)
    debtor, creditor, other = t.state.order
    give(t.state, creditor, 37, 39)
    give(t.state, debtor, 5)
    set_cash(t, debtor, 100)
    t.do(engine.Tick(70_000))
    land_on_39(t, debtor)
    deadline = t.state.payments[0].deadline
    assert deadline == 130_000 and t.state.turn_deadline < 80_000
    t.do(engine.Tick(80_000))
    t.do(engine.ProposeTrade(debtor, other, give_squares=(5,), take_cash=1500))
    assert t.state.phase is Phase.TRADE and engine.next_deadline(t.state) == deadline
    assert not [e for e in t.do(engine.Tick(80_001)) if isinstance(e, engine.TradeDeclined)]
    trade = t.state.trade
    assert trade is not None
    t.do(engine.AcceptTrade(other, trade.trade_id))
    assert t.state.players[debtor].cash == 1600 and t.state.owner[5] == other


def test_D5_R3_the_game_won_while_the_winner_owes_an_auction_price_ends_owing_nothing() -> None:
    """The last opponents leave while B's $4,000 for Boardwalk is pending: the game is over, and so is
    the payment (no debt timer runs on a finished table)."""
    scenario = engine.Scenario(
        players=("A", "B", "C"), mode="classic", cash={"B": 3000}, positions={"A": 36}, dice=((1, 2),)
    )
    state = scenario.state()
    engine.apply(state, Roll(0))
    engine.apply(state, DeclineProperty(0))
    engine.apply(state, Bid(1, 4000))
    engine.apply(state, PassBid(2))
    assert [p.debtor for p in state.payments] == [1]
    engine.apply(state, engine.Leave(2))
    events = engine.apply(state, engine.Leave(0))
    assert isinstance(events[-1], GameEnded) and events[-1].winner == 1
    assert state.finished and state.payments == [] and engine.next_deadline(state) is None
    check_invariants(state)
