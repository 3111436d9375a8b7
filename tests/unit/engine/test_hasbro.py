"""The hasbro rule set (seeds 000, 001): B3-B4, C1-C3, H1-H6 and the hasbro values of G5, G9, J2, J3,
J4, P6, P8, P10, M2, M4, A2, T4, T6, D3, D4; its invariants and replay equality, the house supply among
them."""

from __future__ import annotations

import random

import pytest

import engine
from bots import HeuristicBot
from engine import (
    AcceptTrade,
    AuctionLimitsChanged,
    AuctionSettled,
    AuctionStarted,
    BankPaid,
    Bid,
    Build,
    BuildingBuilt,
    BuildingPlaced,
    BuildingSold,
    BuildingsSoldDown,
    CardDrawn,
    ClaimRent,
    DeedsDealt,
    DiceThrown,
    EndTurn,
    GameEnded,
    JailCardsTraded,
    Kind,
    LeftJail,
    LiftMortgage,
    Mortgage,
    MortgageFeeDue,
    MortgageLifted,
    PassBid,
    Pay,
    PayJailFine,
    PaymentDue,
    PlayerBankrupt,
    ProposeTrade,
    RentClaimable,
    RentClaimed,
    RentClaimLapsed,
    Roll,
    RuleViolation,
    Scenario,
    SellBuilding,
    Tick,
    TurnOrderSet,
    UseJailCard,
    apply,
    check_invariants,
    hasbro,
    legal_commands,
    new_game,
    replay,
)
from engine.cards import CHEST_BASE, Effect
from engine.codec import state_from_data, state_to_data
from engine.config import hasbro_short_6, hasbro_short_8, hasbro_time
from engine.state import BANK, TableState
from sim.runner import play_game

from .helpers import Table, force_dice, give, jail, place, refused, roll_onto, set_cash
from .test_replay_and_fuzz import run_game


def table(players: int = 4, seed: int = 1, **changes: object) -> Table:
    return Table(players, seed, hasbro(**changes))


def on_top(state: TableState, card_id: int) -> None:
    """Put a card on top of its deck (a reordering: every card stays where the invariants want it)."""
    pile = state.chest if card_id >= CHEST_BASE else state.deck
    pile.remove(card_id)
    pile.insert(0, card_id)


def hand(state: TableState, seat: int, card_id: int) -> None:
    """Give `seat` a Get Out of Jail Free card out of its deck."""
    (state.chest if card_id >= CHEST_BASE else state.deck).remove(card_id)
    state.players[seat].jail_cards.append(card_id)


def other(state: TableState, seat: int, k: int = 1) -> int:
    order = state.order
    return order[(order.index(seat) + k) % len(order)]


def types(events: list[engine.Event]) -> list[str]:
    return [type(e).__name__ for e in events]


# -- B3, B4: the board -----------------------------------------------------------------------

B4 = {
    1: ("Mediterranean Ave", 60, (2, 10, 30, 90, 160, 250), 50, 1),
    3: ("Baltic Ave", 60, (4, 20, 60, 180, 320, 450), 50, 1),
    6: ("Oriental Ave", 100, (6, 30, 90, 270, 400, 550), 50, 2),
    8: ("Vermont Ave", 100, (6, 30, 90, 270, 400, 550), 50, 2),
    9: ("Connecticut Ave", 120, (8, 40, 100, 300, 450, 600), 50, 2),
    11: ("St. Charles Place", 140, (10, 50, 150, 450, 625, 750), 100, 3),
    13: ("States Ave", 140, (10, 50, 150, 450, 625, 750), 100, 3),
    14: ("Virginia Ave", 160, (12, 60, 180, 500, 700, 900), 100, 3),
    16: ("St. James Place", 180, (14, 70, 200, 550, 750, 950), 100, 4),
    18: ("Tennessee Ave", 180, (14, 70, 200, 550, 750, 950), 100, 4),
    19: ("New York Ave", 200, (16, 80, 220, 600, 800, 1000), 100, 4),
    21: ("Kentucky Ave", 220, (18, 90, 250, 700, 875, 1050), 150, 5),
    23: ("Indiana Ave", 220, (18, 90, 250, 700, 875, 1050), 150, 5),
    24: ("Illinois Ave", 240, (20, 100, 300, 750, 925, 1100), 150, 5),
    26: ("Atlantic Ave", 260, (22, 110, 330, 800, 975, 1150), 150, 6),
    27: ("Ventnor Ave", 260, (22, 110, 330, 800, 975, 1150), 150, 6),
    29: ("Marvin Gardens", 280, (24, 120, 360, 850, 1025, 1200), 150, 6),
    31: ("Pacific Ave", 300, (26, 130, 390, 900, 1100, 1275), 200, 7),
    32: ("North Carolina Ave", 300, (26, 130, 390, 900, 1100, 1275), 200, 7),
    34: ("Pennsylvania Ave", 320, (28, 150, 450, 1000, 1200, 1400), 200, 7),
    37: ("Park Place", 350, (35, 175, 500, 1100, 1300, 1500), 200, 8),
    39: ("Boardwalk", 400, (50, 200, 600, 1400, 1700, 2000), 200, 8),
}


def test_B3_the_hasbro_board_is_the_us_classic_board() -> None:
    squares = hasbro().board.squares
    kinds = {sq.index: sq.kind for sq in squares}
    assert [i for i, k in kinds.items() if k is Kind.CHANCE] == [7, 22, 36]
    assert [i for i, k in kinds.items() if k is Kind.CHEST] == [2, 17, 33]
    assert (kinds[0], kinds[10], kinds[20], kinds[30]) == (Kind.START, Kind.JAIL, Kind.FREE_PARKING, Kind.GO_TO_JAIL)
    assert (squares[4].name, squares[4].tax, squares[38].name, squares[38].tax) == (
        "Income Tax",
        200,
        "Luxury Tax",
        100,
    )


def test_B4_prices_rents_building_costs_and_mortgage_values() -> None:
    board = hasbro().board
    for idx, (name, price, rents, house, group) in B4.items():
        sq = board.squares[idx]
        assert (sq.name, sq.price, sq.rents, sq.house_cost, sq.group) == (name, price, rents, house, group)
        assert sq.mortgage_value == price // 2
    assert [board.squares[i].price for i in (5, 15, 25, 35, 12, 28)] == [200] * 4 + [150] * 2
    assert board.railroad_rents == (25, 50, 100, 200)
    assert board.utility_multipliers == (4, 10)
    assert [len(m) for m in board.members[1:]] == [2, 3, 3, 3, 3, 3, 3, 2]


# -- C1-C3: the decks -------------------------------------------------------------------------


def test_C1_C2_decks_hold_the_printed_cards() -> None:
    cfg = hasbro()
    assert len(cfg.chance_deck) == len(cfg.chest_deck) == 16
    for deck in (cfg.chance_deck, cfg.chest_deck):
        assert sum(c.effect is Effect.JAIL_FREE for c in deck) == 1
        assert sum(c.effect is Effect.GO_TO_JAIL for c in deck) == 1
    chance_moves = sorted(c.target for c in cfg.chance_deck if c.effect is Effect.ADVANCE_TO)
    assert chance_moves == [0, 5, 11, 24, 39]
    assert sum(c.effect is Effect.NEAREST_RAILROAD and c.multiplier == 2 for c in cfg.chance_deck) == 2
    assert [c.target for c in cfg.chest_deck if c.effect is Effect.ADVANCE_TO] == [0]
    repairs = [
        (c.amount, c.amount2) for d in (cfg.chance_deck, cfg.chest_deck) for c in d if c.effect is Effect.REPAIRS
    ]
    assert repairs == [(25, 100), (40, 115)]
    assert sorted(c.amount for c in cfg.chest_deck if c.effect is Effect.BANK_PAYS) == [
        10,
        20,
        25,
        50,
        100,
        100,
        100,
        200,
    ]
    assert sorted(c.amount for c in cfg.chest_deck if c.effect is Effect.PAY_BANK) == [50, 50, 100]


def test_C3_a_drawn_card_goes_to_the_bottom_of_its_deck() -> None:
    t = table()
    c = t.state.current
    on_top(t.state, 7)  # dividend $50
    events = roll_onto(t, 7)
    assert CardDrawn(c, "chance", 7) in events and BankPaid(c, 50, "card") in events
    assert t.state.deck[-1] == 7 and len(t.state.deck) == 16
    on_top(t.state, CHEST_BASE + 1)  # bank error $200
    t.do(EndTurn(c)) if t.state.phase.value == "post_roll" else None
    c = t.state.current
    roll_onto(t, 17)
    assert t.state.chest[-1] == CHEST_BASE + 1 and len(t.state.chest) == 16


def test_C3_a_kept_jail_card_is_held_apart_and_returns_to_the_bottom_when_used() -> None:
    t = table()
    c = t.state.current
    on_top(t.state, 8)
    roll_onto(t, 7)
    assert t.state.players[c].jail_cards == [8] and 8 not in t.state.deck and len(t.state.deck) == 15
    t.do(EndTurn(c))
    while t.state.current != c:
        seat = t.state.current
        place(t.state, seat, 0)
        force_dice(t.state, 1, 2)  # onto Baltic Ave
        t.do(Roll(seat))
        t.do(engine.DeclineProperty(seat)) if t.state.offer >= 0 else None
        while t.state.auction is not None:
            t.do(PassBid(t.state.actor))
        t.do(EndTurn(seat))
    jail(t, c)
    events = t.do(UseJailCard(c))
    assert LeftJail(c, "card") in events
    assert t.state.deck[-1] == 8 and t.state.players[c].jail_cards == []


def test_C1_advance_to_illinois_collects_200_when_passing_go() -> None:
    t = table()
    c = t.state.current
    on_top(t.state, 2)
    before = t.state.players[c].cash
    events = roll_onto(t, 36)
    assert BankPaid(c, 200, "salary") in events
    assert t.state.players[c].position == 24 and t.state.players[c].cash == before + 200


def test_C1_nearest_utility_if_owned_throw_dice_and_pay_ten_times() -> None:
    t = table()
    c = t.state.current
    o = other(t.state, c)
    give(t.state, o, 12)
    on_top(t.state, 6)
    events = roll_onto(t, 7)
    thrown = next(e for e in events if isinstance(e, DiceThrown))
    due = next(e for e in events if isinstance(e, PaymentDue))
    assert t.state.players[c].position == 12
    assert (due.creditor, due.amount) == (o, 10 * (thrown.d1 + thrown.d2))


def test_C1_nearest_railroad_pays_twice_the_rent() -> None:
    t = table()
    c = t.state.current
    o = other(t.state, c)
    give(t.state, o, 15, 25)
    on_top(t.state, 4)
    events = roll_onto(t, 7)
    assert t.state.players[c].position == 15
    assert PaymentDue(c, o, 100, "rent", square=15) in events  # two railroads: $50, twice


def test_C1_go_back_three_spaces_from_36_draws_community_chest() -> None:
    t = table()
    c = t.state.current
    on_top(t.state, 9)
    on_top(t.state, CHEST_BASE + 7)  # income tax refund $20
    events = roll_onto(t, 36)
    assert CardDrawn(c, "chest", CHEST_BASE + 7) in events and t.state.players[c].position == 33


def test_C2_birthday_collects_10_from_every_player() -> None:
    t = table()
    c = t.state.current
    on_top(t.state, CHEST_BASE + 8)
    events = roll_onto(t, 2)
    dues = [e for e in events if isinstance(e, PaymentDue)]
    assert sorted((d.debtor, d.creditor, d.amount) for d in dues) == sorted((s, c, 10) for s in range(4) if s != c)


# Every card drawn at the table: the drawer rolls 1 + 2 onto Chance 7 (from 4) or Community Chest 17
# (from 14), owning the browns (a hotel, 4 houses) and the light blues (2 houses each: 10 houses, 1 hotel);
# the next player owns Pennsylvania Railroad (15). Each row: the card, the square the drawer ends on,
# and everyone's cash change (drawer, railroad owner, the two others) once every payment is made.
C1_DRAWS = [
    pytest.param(0, 39, (0, 0, 0, 0), id="advance to Boardwalk"),
    pytest.param(1, 0, (200, 0, 0, 0), id="advance to Go, collect 200"),
    pytest.param(2, 24, (0, 0, 0, 0), id="advance to Illinois Ave, Go not passed"),
    pytest.param(3, 11, (0, 0, 0, 0), id="advance to St. Charles Place, Go not passed"),
    pytest.param(4, 15, (-50, 50, 0, 0), id="nearest railroad, twice the rent"),
    pytest.param(5, 15, (-50, 50, 0, 0), id="nearest railroad, the second card"),
    pytest.param(6, 12, (0, 0, 0, 0), id="nearest utility, unowned"),
    pytest.param(7, 7, (50, 0, 0, 0), id="dividend 50"),
    pytest.param(8, 7, (0, 0, 0, 0), id="get out of jail free"),
    pytest.param(9, 4, (-200, 0, 0, 0), id="go back 3 spaces onto income tax"),
    pytest.param(10, 10, (0, 0, 0, 0), id="go to jail"),
    pytest.param(11, 7, (-(10 * 25 + 100), 0, 0, 0), id="general repairs 25 a house 100 a hotel"),
    pytest.param(12, 7, (-15, 0, 0, 0), id="speeding fine 15"),
    pytest.param(13, 5, (200, 0, 0, 0), id="trip to Reading Railroad passing Go"),
    pytest.param(14, 7, (-150, 50, 50, 50), id="chairman of the board pays each 50"),
    pytest.param(15, 7, (150, 0, 0, 0), id="building loan matures 150"),
]
C2_DRAWS = [
    pytest.param(100, 0, (200, 0, 0, 0), id="advance to Go, collect 200"),
    pytest.param(101, 17, (200, 0, 0, 0), id="bank error 200"),
    pytest.param(102, 17, (-50, 0, 0, 0), id="doctor's fee 50"),
    pytest.param(103, 17, (50, 0, 0, 0), id="sale of stock 50"),
    pytest.param(104, 17, (0, 0, 0, 0), id="get out of jail free"),
    pytest.param(105, 10, (0, 0, 0, 0), id="go to jail"),
    pytest.param(106, 17, (100, 0, 0, 0), id="holiday fund 100"),
    pytest.param(107, 17, (20, 0, 0, 0), id="income tax refund 20"),
    pytest.param(108, 17, (30, -10, -10, -10), id="birthday 10 from every player"),
    pytest.param(109, 17, (100, 0, 0, 0), id="life insurance 100"),
    pytest.param(110, 17, (-100, 0, 0, 0), id="hospital fees 100"),
    pytest.param(111, 17, (-50, 0, 0, 0), id="school fees 50"),
    pytest.param(112, 17, (25, 0, 0, 0), id="consultancy fee 25"),
    pytest.param(113, 17, (-(10 * 40 + 115), 0, 0, 0), id="street repairs 40 a house 115 a hotel"),
    pytest.param(114, 17, (10, 0, 0, 0), id="beauty contest 10"),
    pytest.param(115, 17, (100, 0, 0, 0), id="inheritance 100"),
]


def _draw_every_payment_made(card: int) -> TableState:
    chance = card < CHEST_BASE
    deck = tuple(range(16)) if chance else tuple(range(CHEST_BASE, CHEST_BASE + 16))
    top = (card, *(c for c in deck if c != card))
    scenario = Scenario(
        players=("d", "a", "b", "c"),
        mode="hasbro",
        positions={"d": 4 if chance else 14},
        owners={"d": [1, 3, 6, 8, 9], "a": [15]},
        buildings={1: 5, 3: 4, 6: 2, 8: 2, 9: 2},
        chance=top if chance else None,
        chest=None if chance else top,
        dice=((1, 2),),
    )
    state = scenario.state()
    assert CardDrawn(0, "chance" if chance else "chest", card) in apply(state, Roll(0))
    while state.payments:
        apply(state, Pay(state.actor))
    check_invariants(state)
    return state


@pytest.mark.parametrize(("card", "square", "change"), C1_DRAWS + C2_DRAWS)
def test_C1_C2_every_card_drawn_moves_and_pays_its_printed_amounts(
    card: int, square: int, change: tuple[int, ...]
) -> None:
    state = _draw_every_payment_made(card)
    assert state.players[0].position == square
    assert [p.cash - 1500 for p in state.players] == list(change)
    assert state.players[0].in_jail is (square == 10)
    assert state.players[0].jail_cards == ([card] if card in (8, CHEST_BASE + 4) else [])  # the jail cards, kept


# -- G1: the opening roll -------------------------------------------------------------------------


def _opening(events: list[engine.Event]) -> tuple[list[DiceThrown], tuple[int, ...]]:
    throws = [e for e in events if isinstance(e, DiceThrown)]
    (order,) = [e.order for e in events if isinstance(e, TurnOrderSet)]
    return throws, order


def test_G1_the_highest_opening_throw_starts_and_play_passes_to_the_left() -> None:
    for seed in range(40):
        state, events = new_game(hasbro(), ["a", "b", "c", "d"], seed)
        throws, order = _opening(events)
        # every player throws, in seating order, before the order is set (the events show the choice)
        assert [t.seat for t in throws[:4]] == [0, 1, 2, 3]
        assert types(events)[1 : 1 + len(throws)] == ["DiceThrown"] * len(throws)
        contenders, rest = [0, 1, 2, 3], throws
        while len(contenders) > 1:  # each round: the contenders throw, the highest stay
            round_, rest = rest[: len(contenders)], rest[len(contenders) :]
            assert [t.seat for t in round_] == contenders
            high = max(t.d1 + t.d2 for t in round_)
            contenders = [t.seat for t in round_ if t.d1 + t.d2 == high]
        assert rest == []
        starter = order[0]
        assert contenders == [starter]
        assert order == tuple((starter + i) % 4 for i in range(4))  # a rotation of the seating
        assert state.current == starter and state.throw == 0
        assert state_to_data(replay(events)) == state_to_data(state)


def test_G1_players_tied_for_the_highest_throw_throw_again_among_themselves() -> None:
    seed = next(s for s in range(500) if len(_opening(new_game(hasbro(), ["a", "b", "c"], s)[1])[0]) > 3)
    _, events = new_game(hasbro(), ["a", "b", "c"], seed)
    throws, order = _opening(events)
    first = {t.seat: t.d1 + t.d2 for t in throws[:3]}
    tied = [seat for seat, total in first.items() if total == max(first.values())]
    assert len(tied) >= 2
    assert [t.seat for t in throws[3 : 3 + len(tied)]] == tied  # only the tied throw again, in seating order
    assert order[0] in tied


def test_G1_the_opening_draws_the_dice_the_replay_moves_past() -> None:
    """Each opening throw takes two draws of the table's generator; a replay advances by them too."""
    state, events = new_game(hasbro(), ["a", "b"], 3)
    throws, _ = _opening(events)
    deck_draws = 15 + 15  # the two 16-card decks' shuffles
    assert state.rng_counter == 2 * len(throws) + deck_draws
    assert replay(events).rng_counter == state.rng_counter


# -- G5, G9 ----------------------------------------------------------------------------------------


def test_G5_passing_go_by_the_dice_pays_200() -> None:
    state = Scenario(players=("a", "b"), mode="hasbro", positions={"a": 36}, dice=((2, 3),)).state()
    events = apply(state, Roll(0))
    assert engine.Moved(0, 36, 1) in events
    assert [e for e in events if isinstance(e, BankPaid)] == [BankPaid(0, 200, "salary")]
    assert state.players[0].cash == 1700


def test_G9_a_jailed_owner_still_collects_rent() -> None:
    """Online nobody pays rent to a jailed owner (test_turn_flow's G9 tests); the printed game does."""
    owners = {"b": ["St. James Place"]}
    scenario = Scenario(("a", "b"), mode="hasbro", positions={"a": 13}, owners=owners, jail={"b": 0}, dice=((1, 2),))
    state = scenario.state()
    events = apply(state, Roll(0))
    assert PaymentDue(0, 1, 14, "rent", square=16) in events
    apply(state, Pay(0))
    assert state.players[1].in_jail
    assert (state.players[0].cash, state.players[1].cash) == (1500 - 14, 1500 + 14)


# -- H1, J2, J3, J4 -----------------------------------------------------------------------------


def test_H1_1500_each_2_to_6_players_200_salary_free_parking_does_nothing() -> None:
    t = table(players=6)
    assert all(p.cash == 1500 for p in t.state.players)
    with pytest.raises(RuleViolation) as refused_seventh:
        new_game(hasbro(), [f"p{i}" for i in range(7)], 1)
    assert refused_seventh.value.rule == "H1"
    c = t.state.current
    place(t.state, c, 37)
    force_dice(t.state, 1, 2)
    events = t.do(Roll(c))
    assert BankPaid(c, 200, "salary") in events  # exactly on GO: $200, no online bonus
    t.do(EndTurn(c))
    c = t.state.current
    before = t.state.players[c].cash
    events = roll_onto(t, 20)  # Free Parking
    assert types(events) == ["DiceRolled", "Moved"] and t.state.players[c].cash == before
    t.do(EndTurn(c))
    c = t.state.current
    events = roll_onto(t, 4)
    assert PaymentDue(c, BANK, 200, "tax", square=4) in events


def test_H1_taxes_go_to_the_bank_and_free_parking_pays_none_of_them_out() -> None:
    """No Free Parking pot: income tax and luxury tax are the bank's, and whoever lands on Free Parking
    next gets nothing."""
    scenario = Scenario(players=("a", "b", "c"), mode="hasbro", positions={"a": 1, "b": 35, "c": 17})
    state = scenario.state()
    bank_in = state.bank_in
    for seat in range(3):  # onto 4, 38, 20
        force_dice(state, 1, 2)
        apply(state, Roll(seat))
        if state.payments:
            apply(state, Pay(seat))
        apply(state, EndTurn(seat))
    assert [p.position for p in state.players] == [4, 38, 20]
    assert [p.cash for p in state.players] == [1500 - 200, 1500 - 100, 1500]
    assert state.bank_in == bank_in + 200 + 100
    check_invariants(state)


def test_J2_the_fine_is_50() -> None:
    t = table()
    c = t.state.current
    jail(t, c)
    events = t.do(PayJailFine(c))
    assert LeftJail(c, "fine", 50) in events and t.state.players[c].cash == 1450


def test_J3_doubles_in_jail_free_the_player_who_moves_by_them_and_does_not_roll_again() -> None:
    t = table()
    c = t.state.current
    jail(t, c, turns=1)
    give(t.state, c, 18)
    force_dice(t.state, 4, 4)
    events = t.do(Roll(c))
    assert types(events) == ["DiceRolled", "LeftJail", "Moved"]
    assert events[1:] == [LeftJail(c, "doubles", 0), engine.Moved(c, 10, 18)]
    p = t.state.players[c]
    assert not p.in_jail and p.jail_turns == 0 and p.cash == 1500
    assert t.state.phase is engine.Phase.POST_ROLL
    refused(t, Roll(c), "G2")


def test_J4_third_failed_roll_pays_50_and_moves() -> None:
    t = table()
    c = t.state.current
    jail(t, c, turns=2)
    force_dice(t.state, 1, 2)
    events = t.do(Roll(c))
    assert PaymentDue(c, BANK, 50, "jail_fine", then_move=True, square=10) in events
    t.do(Pay(c))
    assert t.state.players[c].position == 13 and not t.state.players[c].in_jail


# -- M2, M4, T4 -----------------------------------------------------------------------------------


def test_M2_lifting_costs_the_mortgage_value_plus_10_percent_rounded_up() -> None:
    cfg = hasbro()
    assert cfg.lift_cost(60) == 33 and cfg.lift_cost(350) == 193 and cfg.lift_cost(400) == 220
    t = table()
    c = t.state.current
    give(t.state, c, 1)
    t.do(Mortgage(c, 1))
    assert t.state.players[c].cash == 1530
    events = t.do(LiftMortgage(c, 1))
    assert MortgageLifted(c, 1, 33) in events and t.state.players[c].cash == 1497


def _mortgaged_trade(t: Table) -> tuple[int, int]:
    c = t.state.current
    o = other(t.state, c)
    give(t.state, c, 39)
    t.state.mortgaged_round[39] = 0
    t.do(ProposeTrade(c, o, give_squares=(39,), take_cash=100))
    events = t.do(AcceptTrade(o, t.state.trade.trade_id))  # type: ignore[union-attr]
    assert MortgageFeeDue(o, 39, 20) in events  # M4: 10% of the $200 mortgage value
    assert t.state.actor == o
    return c, o


def test_M4_received_mortgaged_property_pay_10_percent_and_keep_it_mortgaged() -> None:
    t = table()
    c, o = _mortgaged_trade(t)
    t.do(Pay(o))
    assert t.state.players[o].cash == 1500 - 100 - 20 and t.state.mortgaged_round[39] >= 0
    assert t.state.actor == c and not t.state.payments
    assert t.state.config.lift_cost(400) == 220  # and later value + 10% to lift


def test_M4_or_lift_it_at_once_for_value_plus_10_percent_only() -> None:
    t = table()
    c, o = _mortgaged_trade(t)
    assert LiftMortgage(o, 39) in legal_commands(t.state, o)
    t.do(LiftMortgage(o, 39))
    assert t.state.players[o].cash == 1500 - 100 - 220 and t.state.mortgaged_round[39] < 0
    assert not t.state.payments and t.state.actor == c


def test_T4_a_mortgaged_property_trades_and_the_receiver_owes_the_M4_fee() -> None:
    """Online Classic refuses the trade (test_trade's T4 tests); the printed game lets it through with M4."""
    owners = {"A": ["Boardwalk"]}
    state = Scenario(players=("A", "B", "C"), mode="hasbro", owners=owners, mortgaged=["Boardwalk"]).state()
    apply(state, ProposeTrade(0, 1, give_squares=(39,), take_cash=100))
    events = apply(state, AcceptTrade(1, state.trade.trade_id))  # type: ignore[union-attr]
    assert types(events) == ["TradeExecuted", "MortgageFeeDue"]
    assert events[1] == MortgageFeeDue(1, 39, 20)  # 10% of the $200 mortgage value
    assert state.owner[39] == 1 and state.mortgaged_round[39] >= 0
    apply(state, Pay(1))
    assert [p.cash for p in state.players] == [1500 + 100, 1500 - 100 - 20, 1500]
    assert state.owner[39] == 1 and state.mortgaged_round[39] >= 0 and not state.payments


def test_M4_lifting_cancels_only_the_lifters_own_fee_not_an_earlier_receivers() -> None:
    """A received a mortgaged square and passed it on to B before paying the fee (T6: trades any
    time); B lifts it: B's fee goes, A still owes theirs."""
    s = engine.Scenario(players=("A", "B", "C"), mode="hasbro", owners={"C": ["Baltic Ave"]}, mortgaged=["Baltic Ave"])
    state = s.state()
    apply(state, ProposeTrade(2, 0, give_squares=(3,)))
    apply(state, AcceptTrade(0, state.trade.trade_id))  # type: ignore[union-attr]
    apply(state, ProposeTrade(0, 1, give_squares=(3,)))
    apply(state, AcceptTrade(1, state.trade.trade_id))  # type: ignore[union-attr]
    assert [(p.debtor, p.amount) for p in state.payments] == [(0, 3), (1, 3)]  # 10% of $30, each receiver
    apply(state, LiftMortgage(1, 3))
    assert [(p.debtor, p.amount, p.square) for p in state.payments] == [(0, 3, 3)]
    assert state.actor == 0
    apply(state, Pay(0))
    assert state.players[0].cash == 1500 - 3 and not state.payments


def test_M4_a_table_recorded_before_the_own_fee_rule_replays_as_it_was_played() -> None:
    """Its config (from its TableCreated) lacks `mortgage_fee_own_only`: the lift cancelled both fees."""
    old = engine.preset("hasbro").with_changes(mortgage_fee_own_only=False)
    s = engine.Scenario(players=("A", "B", "C"), config=old, owners={"C": ["Baltic Ave"]}, mortgaged=["Baltic Ave"])
    state = s.state()
    for command in (ProposeTrade(2, 0, give_squares=(3,)), ProposeTrade(0, 1, give_squares=(3,))):
        apply(state, command)
        apply(state, AcceptTrade(command.counterparty, state.trade.trade_id))  # type: ignore[union-attr]
    apply(state, LiftMortgage(1, 3))
    assert not state.payments
    recorded = engine.preset("hasbro")  # a hasbro config as tables recorded it before: without the field
    data = state_to_data(engine.new_game(recorded, ["A", "B"], 1)[0])
    del data["config"]["mortgage_fee_own_only"]
    assert recorded.mortgage_fee_own_only and not state_from_data(data).config.mortgage_fee_own_only


def test_T2_an_offered_square_is_not_mortgaged_while_the_proposal_waits_for_its_answer() -> None:
    """P10 lets either side mortgage while B decides; an offered square would then reach the other side
    mortgaged (with an M4 fee) on terms changed under their answer: the proposal's squares stand."""
    owners = {"A": ["Baltic Ave", "Oriental Ave"], "B": ["Vermont Ave"]}
    state = engine.Scenario(players=("A", "B", "C"), mode="hasbro", owners=owners).state()
    apply(state, ProposeTrade(0, 1, give_squares=(3,), take_squares=(8,)))
    for seat, square in ((0, 3), (1, 8)):
        before = state_to_data(state)
        with pytest.raises(RuleViolation) as info:
            apply(state, Mortgage(seat, square))
        assert info.value.rule == "T2" and state_to_data(state) == before
        assert Mortgage(seat, square) not in legal_commands(state, seat)
    apply(state, Mortgage(0, 6))  # a square outside the proposal
    apply(state, AcceptTrade(1, state.trade.trade_id))  # type: ignore[union-attr]
    assert state.owner[3] == 1 and state.mortgaged_round[3] < 0 and not state.payments
    apply(state, Mortgage(1, 3))  # answered: B's to mortgage now


def test_T2_an_offered_mortgaged_square_is_not_lifted_while_the_proposal_waits_for_its_answer() -> None:
    """The other way round: lifted meanwhile, the square would reach B unmortgaged and with no M4 fee."""
    state = engine.Scenario(players=("A", "B", "C"), mode="hasbro", owners={"A": [39]}, mortgaged=[39]).state()
    apply(state, ProposeTrade(0, 1, give_squares=(39,), take_cash=100))
    before = state_to_data(state)
    with pytest.raises(RuleViolation) as info:
        apply(state, LiftMortgage(0, 39))
    assert info.value.rule == "T2" and state_to_data(state) == before
    assert LiftMortgage(0, 39) not in legal_commands(state, 0)
    apply(state, AcceptTrade(1, state.trade.trade_id))  # type: ignore[union-attr]
    assert state.owner[39] == 1 and state.mortgaged_round[39] >= 0
    assert [(p.debtor, p.creditor) for p in state.payments] == [(1, engine.BANK)]  # M4: B owes the fee


# -- A2 -----------------------------------------------------------------------------------------------


def test_A2_every_player_bids_the_decliner_included_from_10_in_1_steps() -> None:
    t = table()
    c = t.state.current
    roll_onto(t, 39)
    events = t.do(engine.DeclineProperty(c))
    started = next(e for e in events if isinstance(e, AuctionStarted))
    assert started.start_price == 10 and started.increment == 1
    assert started.bidders == tuple(other(t.state, c, k) for k in (1, 2, 3, 0))  # left of the decliner first
    first = started.bidders[0]
    refused(t, Bid(first, 9), "A2")  # under $10: the hasbro bidding rule, not A1
    t.do(Bid(first, 10))
    refused(t, Bid(started.bidders[1], 10), "A2")  # under +$1
    t.do(Bid(started.bidders[1], 11))
    for seat in (started.bidders[2], c, first):
        t.do(PassBid(seat))
    assert t.state.owner[39] == started.bidders[1]


# -- P6, P8, P10 -----------------------------------------------------------------------------------------


def _built(t: Table, seat: int, levels: dict[int, int]) -> None:
    for sq, level in levels.items():
        give(t.state, seat, sq)
        t.state.buildings[sq] = level


def test_P6_even_building_and_selling_hold_at_any_time() -> None:
    """P10 lets the owner build outside their turn and with no per-turn limit, but not unevenly."""
    t = table()
    o = other(t.state, t.state.current)
    _built(t, o, {6: 1, 8: 0, 9: 0})
    refused(t, Build(o, 6), "P6")  # a second house on Oriental Ave before Vermont and Connecticut have one
    assert Build(o, 6) not in legal_commands(t.state, o)
    assert BuildingBuilt(o, 8, 1, 50) in t.do(Build(o, 8))
    assert BuildingBuilt(o, 9, 1, 50) in t.do(Build(o, 9))
    assert BuildingBuilt(o, 6, 2, 50) in t.do(Build(o, 6))
    refused(t, SellBuilding(o, 8), "P6")  # selling down Vermont Ave while Oriental Ave has 2
    assert BuildingSold(o, 6, 1, 25) in t.do(SellBuilding(o, 6))
    assert [t.state.buildings[sq] for sq in (6, 8, 9)] == [1, 1, 1]
    assert t.state.players[o].cash == 1500 - 3 * 50 + 25


def test_P8_a_sold_hotel_returns_to_4_houses_at_half_its_cost() -> None:
    t = table()
    c = t.state.current
    _built(t, c, {37: 5, 39: 5})
    houses = t.state.bank_houses()
    events = t.do(SellBuilding(c, 39))
    assert BuildingSold(c, 39, 4, 100) in events
    assert t.state.bank_houses() == houses - 4 and t.state.bank_hotels() == 11


def test_P8_without_4_houses_in_the_bank_the_group_goes_down_to_what_it_can_supply() -> None:
    t = table()
    c = t.state.current
    o = other(t.state, c)
    _built(t, o, {31: 4, 32: 4, 34: 4, 26: 4, 27: 4, 29: 4, 6: 2, 8: 2, 9: 2})  # 30 houses out
    _built(t, c, {1: 5, 3: 5})
    assert t.state.bank_houses() == 2
    events = t.do(SellBuilding(c, 1))
    assert BuildingsSoldDown(c, (1, 3), (1, 1), 8 * 25) in events
    assert t.state.bank_houses() == 0 and t.state.bank_hotels() == 12


def _bank_short(t: Table, seat: int, houses: int) -> None:
    """Build on whole groups of `seat` (greens, yellows, oranges, reds), evenly, until the bank holds `houses`."""
    for group in ((31, 32, 34), (26, 27, 29), (16, 18, 19), (21, 23, 24)):
        take = min(12, t.state.bank_houses() - houses)
        give(t.state, seat, *group)
        for i, sq in enumerate(group):
            t.state.buildings[sq] = take // 3 + (i < take % 3)
    assert t.state.bank_houses() == houses


def _short_bank(houses: int, owners: dict[str, list[int | str]], buildings: dict[int | str, int]) -> Scenario:
    """A hasbro position: ann's `owners`/`buildings`, and cid's groups built evenly until the bank
    holds `houses` houses."""
    groups = ((31, 32, 34), (26, 27, 29), (16, 18, 19), (21, 23, 24))
    out = 32 - houses - sum(level for level in buildings.values() if level < 5)
    levels: dict[int | str, int] = dict(buildings)
    for group in groups:
        take = min(12, out)
        out -= take
        levels.update({sq: take // 3 + (i < take % 3) for i, sq in enumerate(group)})
    cid: list[int | str] = [sq for group in groups for sq in group]
    return Scenario(("ann", "bob", "cid"), mode="hasbro", owners={**owners, "cid": cid}, buildings=levels)


def test_P8_a_hotel_sold_with_3_houses_in_the_bank_goes_down_to_3_and_the_group_keeps_the_rest() -> None:
    state = _short_bank(3, {"ann": ["Park Place", "Boardwalk"]}, {"Park Place": 5, "Boardwalk": 4}).state()
    assert state.bank_houses() == 3
    events = apply(state, SellBuilding(0, 37))
    # P8: only as far as the bank can supply: Park Place to 3 houses, Boardwalk keeps its 4 (P6: 3/4 is even)
    assert BuildingsSoldDown(0, (37, 39), (3, 4), 2 * 100) in events  # the hotel and a house, half of $200 each
    assert (state.buildings[37], state.buildings[39]) == (3, 4)
    assert state.bank_houses() == 0 and state.bank_hotels() == 12


def test_P8_hotels_on_the_whole_group_with_2_houses_in_the_bank_end_1_1_0() -> None:
    state = _short_bank(2, {"ann": [6, 8, 9]}, {6: 5, 8: 5, 9: 5}).state()
    assert state.bank_houses() == 2
    events = apply(state, SellBuilding(0, 9))
    # P8, P6: no hotel may stay next to a square of 2 houses or fewer; the bank's 2 houses give 1/1/0
    assert BuildingsSoldDown(0, (6, 8, 9), (1, 1, 0), (15 - 2) * 25) in events
    assert state.bank_houses() == 0 and state.bank_hotels() == 12


def test_P8_the_sold_square_goes_lowest_when_the_group_cannot_stay_level() -> None:
    t = table()
    c = t.state.current
    _built(t, c, {6: 5, 8: 5, 9: 5})
    _bank_short(t, other(t.state, c), 2)
    events = t.do(SellBuilding(c, 6))
    assert BuildingsSoldDown(c, (6, 8, 9), (0, 1, 1), (15 - 2) * 25) in events


def test_P8_a_short_bank_never_makes_a_square_higher_than_it_was() -> None:
    t = table()
    c = t.state.current
    _built(t, c, {11: 5, 13: 3, 14: 3})
    _bank_short(t, other(t.state, c), 1)
    events = t.do(SellBuilding(c, 11))
    # 7 houses in reach (3 + 3 + the bank's 1): 4/3/3 needs 10, 3/3/1 is uneven (P6); 7 kept at most,
    # St. Charles Place (the hotel sold) lowest, then the earlier square highest: 2/3/2
    assert BuildingsSoldDown(c, (11, 13, 14), (2, 3, 2), (11 - 7) * 50) in events
    assert t.state.bank_houses() == 0


def test_P10_building_outside_ones_turn() -> None:
    t = table()
    c = t.state.current
    o = other(t.state, c)
    give(t.state, o, 37, 39)
    assert Build(o, 37) in legal_commands(t.state, o)
    events = t.do(Build(o, 37))
    assert BuildingBuilt(o, 37, 1, 200) in events and t.state.current == c


@pytest.mark.parametrize("phase", ["post_roll", "buy", "payment"])
def test_P10_the_player_to_act_may_build_after_rolling_and_the_legal_moves_say_so(phase: str) -> None:
    """Building is open to every seat at any time: the seat whose turn it is too, after the roll, while
    deciding a purchase and while a payment is due; `legal_commands` lists what `check` lets through."""
    dice = {"post_roll": (4, 6), "buy": (5, 6), "payment": (1, 3)}  # just visiting, St. Charles, income tax
    owners = {"a": ["Park Place", "Boardwalk"]}
    state = engine.Scenario(players=("a", "b"), mode="hasbro", owners=owners, dice=(dice[phase],)).state()
    apply(state, Roll(0))
    assert state.phase.value == phase and state.actor == 0
    engine.check(state, Build(0, 37))
    assert Build(0, 37) in legal_commands(state, 0)
    events = apply(state, Build(0, 37))
    assert BuildingBuilt(0, 37, 1, 200) in events and state.phase.value == phase


def test_P10_32_houses_and_12_hotels_none_left_nobody_builds() -> None:
    t = table(players=2)
    c = t.state.current
    o = other(t.state, c)
    _built(t, o, {31: 4, 32: 4, 34: 4, 26: 4, 27: 4, 29: 4, 6: 3, 8: 3, 9: 2})  # all 32 houses
    give(t.state, c, 37, 39)
    assert t.state.bank_houses() == 0
    refused(t, Build(c, 37), "P10")
    t2 = table(players=2)
    c = t2.state.current
    for group in (2, 3, 4, 5):  # 12 hotels out
        for sq in t2.state.config.board.members[group]:
            give(t2.state, other(t2.state, c), sq)
            t2.state.buildings[sq] = 5
    _built(t2, c, {37: 4, 39: 4})
    assert t2.state.bank_hotels() == 0
    refused(t2, Build(c, 37), "P10")


def test_P10_when_several_want_more_houses_than_the_bank_holds_they_are_auctioned() -> None:
    t = table()
    c = t.state.current
    o, x = other(t.state, c), other(t.state, c, 2)
    _built(t, x, {31: 4, 32: 4, 34: 4, 26: 4, 27: 4, 29: 4})  # only hotels would suit x
    _built(t, o, {11: 3, 13: 2, 14: 2})  # o could build a house
    give(t.state, c, 1, 3)
    assert t.state.bank_houses() == 1
    events = t.do(Build(c, 1))
    started = next(e for e in events if isinstance(e, AuctionStarted))
    assert (started.reason, started.bidders, started.start_price, started.increment) == ("house", (o, c), 10, 1)
    t.do(Bid(o, 10))
    events = t.do(PassBid(c))
    assert AuctionSettled(started.auction_id, 1, o, 10) in events
    t.do(Pay(o))
    assert t.state.won_buildings == [(o, 1)] and t.state.bank_houses() == 0
    refused(t, Build(c, 1), "P10")
    cash = t.state.players[o].cash
    worth = t.state.net_worth(o)  # H6: a won building counts once it stands on a square
    assert BuildingPlaced(o, 13, 3) in t.do(Build(o, 13))
    assert t.state.players[o].cash == cash and t.state.won_buildings == []
    assert t.state.net_worth(o) == worth + t.state.config.board.squares[13].house_cost


def test_P10_a_scarce_building_is_not_auctioned_over_an_auction_already_running() -> None:
    """Building while a square's auction runs would start a building auction over it (and lose the
    square's): refused until that auction has ended, when the building auction may start."""
    t = table()
    c = t.state.current
    o, x = other(t.state, c), other(t.state, c, 2)
    _built(t, x, {31: 4, 32: 4, 34: 4, 26: 4, 27: 4, 29: 4})
    _built(t, o, {11: 3, 13: 2, 14: 2})
    give(t.state, x, 1, 3)
    assert t.state.bank_houses() == 1
    place(t.state, c, 36)
    force_dice(t.state, 1, 2)
    t.do(Roll(c))  # Boardwalk, unowned
    t.do(engine.DeclineProperty(c))
    auction = t.state.auction
    assert auction is not None and auction.square == 39
    refused(t, Build(x, 1), "P10")
    assert not any(isinstance(cmd, Build) and cmd.square == 1 for cmd in engine.legal_commands(t.state, x))
    while t.state.auction is auction:
        t.do(PassBid(t.state.actor))
    events = t.do(Build(x, 1))  # the square's auction is over: the house is auctioned now
    assert any(isinstance(e, AuctionStarted) and e.square == 1 and e.reason == "house" for e in events)


def test_A3_T6_a_trade_during_a_services_auction_sends_it_the_bidders_new_limits() -> None:
    """The auction service holds bids to the limits the table reckoned at the opening; a hasbro trade
    meanwhile changes two of them, so the table tells it the new ones, once. A command that changes
    no limit (a proposal, a mortgage: its value moves from what could be raised into cash) tells it
    nothing, and after the settlement nothing more is sent."""
    t = Table(4, 1, hasbro(external=("auction",)))
    c = t.state.current
    a, b = [s for s in t.state.active_seats if s != c][:2]
    give(t.state, a, 1)  # worth 30 mortgaged
    roll_onto(t, 39)
    started = t.do(engine.DeclineProperty(c))[-1]
    assert isinstance(started, AuctionStarted)
    assert started.limits == tuple({a: 1730}.get(s, 1700) for s in started.bidders)
    assert not any(isinstance(e, AuctionLimitsChanged) for e in t.do(ProposeTrade(a, b, give_cash=300)))
    trade = t.state.trade
    assert trade is not None
    events = t.do(AcceptTrade(b, trade.trade_id))
    expected = tuple({a: 1430, b: 2000}.get(s, 1700) for s in started.bidders)
    assert [e for e in events if isinstance(e, AuctionLimitsChanged)] == [
        AuctionLimitsChanged(started.auction_id, expected)
    ]
    assert t.state.auction is not None and t.state.auction.limits == expected
    assert not any(isinstance(e, AuctionLimitsChanged) for e in t.do(engine.Mortgage(a, 1)))
    events = t.do(engine.SettleAuction(BANK, started.auction_id, b, 1900))
    assert not any(isinstance(e, AuctionLimitsChanged) for e in events)
    assert t.state.auction is None


def test_A3_a_tables_own_auction_never_sends_limits() -> None:
    t = Table(4, 1, hasbro())
    c = t.state.current
    roll_onto(t, 39)
    started = t.do(engine.DeclineProperty(c))[-1]
    assert isinstance(started, AuctionStarted) and started.limits == ()
    a, b = started.bidders[:2]
    t.do(ProposeTrade(a, b, give_cash=300))
    trade = t.state.trade
    assert trade is not None
    assert not any(isinstance(e, AuctionLimitsChanged) for e in t.do(AcceptTrade(b, trade.trade_id)))


def test_T6_A2_a_trade_proposed_during_an_auction_is_answered_in_a_bids_time_and_the_bidder_then_has_theirs() -> None:
    """The turn's timer has run out meanwhile: the proposal is not declined at the next tick, and the
    bidder it held up gets their whole 20 s back once it is answered."""
    t = table(players=4)
    c = t.state.current
    t.do(Tick(70_000))
    roll_onto(t, 39, 1, 2)
    t.do(engine.DeclineProperty(c))
    bidder = t.state.actor
    t.do(Tick(80_000))  # past the turn's 75 s
    a, b = [s for s in t.state.active_seats if s != bidder][:2]
    t.do(ProposeTrade(a, b, give_cash=10))
    assert engine.next_deadline(t.state) == 80_000 + 20_000
    assert not [e for e in t.do(Tick(80_001)) if isinstance(e, engine.TradeDeclined)]
    t.do(Tick(95_000))
    trade = t.state.trade
    assert trade is not None
    t.do(engine.DeclineTrade(b, trade.trade_id))
    assert t.state.actor == bidder and t.state.bid_deadline == 95_000 + 20_000


# -- T6 ---------------------------------------------------------------------------------------------------


def test_T6_any_two_players_trade_at_any_time_jail_cards_included() -> None:
    t = table()
    c = t.state.current
    o, x = other(t.state, c), other(t.state, c, 2)
    hand(t.state, o, 8)
    give(t.state, x, 5)
    t.do(ProposeTrade(o, x, give_cards=(8,), take_squares=(5,)))  # neither is the player to act
    assert t.state.actor == x
    events = t.do(AcceptTrade(x, t.state.trade.trade_id))  # type: ignore[union-attr]
    assert JailCardsTraded(1, o, x, (8,), ()) in events
    assert t.state.players[x].jail_cards == [8] and t.state.owner[5] == o and t.state.actor == c
    refused(t, ProposeTrade(o, x, take_cards=(CHEST_BASE + 4,)), "T2")  # x holds no such card


def test_T6_a_trade_agreed_at_the_trade_service_carries_jail_cards_too() -> None:
    t = table(external=("trade",))
    c = t.state.current
    x = other(t.state, c)
    hand(t.state, c, 8)
    give(t.state, x, 5)
    events = t.do(engine.ExecuteTrade(c, 4, x, t.state.turn_no, give_cards=(8,), take_squares=(5,)))
    assert JailCardsTraded(4, c, x, (8,), ()) in events
    assert t.state.players[x].jail_cards == [8] and t.state.owner[5] == c


def test_T6_a_trade_agreed_at_the_trade_service_by_players_not_to_act_executes_at_any_time() -> None:
    t = table(external=("trade",))
    c = t.state.current
    o, x = other(t.state, c), other(t.state, c, 2)
    hand(t.state, o, 8)
    give(t.state, x, 5)
    roll_onto(t, 4)  # income tax: the current player owes the bank, outside T1's windows for everyone else
    assert t.state.phase is engine.Phase.PAYMENT and t.state.actor == c
    events = t.do(engine.ExecuteTrade(o, 2, x, t.state.turn_no, give_cards=(8,), take_squares=(5,)))
    assert JailCardsTraded(2, o, x, (8,), ()) in events and t.state.owner[5] == o
    # the window is the engine's, for the trade service and the table alike
    engine.trade_window(t.state, x)
    refused(t, engine.ExecuteTrade(o, 3, x, t.state.turn_no - 1, give_cash=1), "T1")  # a proposal of a past turn
    t.state.players[x].bankrupt = True
    with pytest.raises(RuleViolation) as info:
        engine.trade_window(t.state, x)
    assert info.value.rule == "G1"


def test_T1_online_a_trade_of_a_player_not_to_act_lapses_at_the_table() -> None:
    t = Table(4, 1, engine.classic(external=("trade",)))
    c = t.state.current
    o = other(t.state, c)
    give(t.state, o, 1)
    with pytest.raises(RuleViolation) as info:
        engine.trade_window(t.state, o)
    assert info.value.rule == "T1" and "must act now" in info.value.message
    error = refused(t, engine.ExecuteTrade(o, 1, c, t.state.turn_no, give_squares=(1,), take_cash=1000), "T1")
    assert "lapsed" in error.message


# -- D3, D4 -------------------------------------------------------------------------------------------------


def test_D3_bankrupt_to_a_player_buildings_at_half_cards_and_mortgages_with_M4() -> None:
    t = table()
    c = t.state.current
    o = other(t.state, c)
    _built(t, c, {1: 1, 3: 1})
    give(t.state, c, 5)
    t.state.mortgaged_round[5] = 0
    hand(t.state, c, 8)
    _built(t, o, {37: 5, 39: 5})
    set_cash(t, c, 0)
    events = roll_onto(t, 39)
    assert PlayerBankrupt(c, o, 4) in events
    assert t.state.players[o].cash == 1500 + 2 * 25  # the houses sold to the bank at half
    assert [t.state.owner[sq] for sq in (1, 3, 5)] == [o, o, o] and t.state.buildings[1] == 0
    assert t.state.players[o].jail_cards == [8]
    assert MortgageFeeDue(o, 5, 10) in events


def test_D4_bankrupt_to_the_bank_properties_auctioned_at_once_cards_back_to_the_deck() -> None:
    t = table()
    c = t.state.current
    give(t.state, c, 1, 3, 5)
    t.state.mortgaged_round[5] = 0
    hand(t.state, c, 8)
    set_cash(t, c, 0)
    events = roll_onto(t, 4)  # income tax $200, more than c could raise
    assert PlayerBankrupt(c, BANK, 4) in events
    assert t.state.deck[-1] == 8
    auctioned = []
    for _ in range(3):
        auction = t.state.auction
        assert auction is not None and auction.reason == "bankrupt" and auction.start_price == 10
        assert c not in auction.bidders and len(auction.bidders) == 3
        auctioned.append(auction.square)
        while t.state.auction is not None and t.state.auction.auction_id == auction.auction_id:
            t.do(PassBid(t.state.actor))
    assert auctioned == [1, 3, 5] and t.state.auction is None
    assert t.state.mortgaged_round[5] < 0 and t.state.owner[5] == BANK


# -- H2 ------------------------------------------------------------------------------------------------------


def test_H2_rent_is_due_only_when_the_owner_claims_it() -> None:
    t = table(rent_claims=True)
    c = t.state.current
    o = other(t.state, c)
    give(t.state, o, 1)
    events = roll_onto(t, 1)
    assert RentClaimable(c, o, 1, 2) in events and not t.state.payments
    assert ClaimRent(o) in legal_commands(t.state, o)
    events = t.do(ClaimRent(o))
    assert events[0] == RentClaimed(o) and PaymentDue(c, o, 2, "rent", square=1) in events


def test_H2_an_unclaimed_rent_lapses_when_the_next_player_rolls() -> None:
    t = table(rent_claims=True)
    c = t.state.current
    o = other(t.state, c)
    give(t.state, o, 1)
    roll_onto(t, 1)
    t.do(EndTurn(c))
    assert t.state.claim  # still claimable before the next roll
    nxt = t.state.current
    place(t.state, nxt, 0)
    force_dice(t.state, 1, 2)
    events = t.do(Roll(nxt))
    assert events[0] == RentClaimLapsed(o) and not t.state.claim
    refused(t, ClaimRent(o), "H2")


def test_H2_two_rents_of_one_turn_stay_claimable_each_until_the_next_player_rolls() -> None:
    """Doubles: the payer lands on two owners' squares in one turn; neither claim replaces the other,
    each owner claims their own, and what is left lapses at the next player's roll."""
    t = table(players=3, rent_claims=True)
    payer = t.state.current
    a, b = other(t.state, payer), other(t.state, payer, 2)
    give(t.state, a, 6)
    give(t.state, b, 9)
    place(t.state, payer, 4)
    force_dice(t.state, 1, 1, 1, 2)
    assert RentClaimable(payer, a, 6, 6) in t.do(Roll(payer))
    assert RentClaimable(payer, b, 9, 8) in t.do(Roll(payer))  # the doubles' re-roll
    events = t.do(ClaimRent(a))
    assert events[0] == RentClaimed(a) and PaymentDue(payer, a, 6, "rent", square=6) in events
    refused(t, ClaimRent(a), "H2")  # claimed once
    t.do(Pay(payer))
    t.do(EndTurn(payer))
    nxt = t.state.current
    place(t.state, nxt, 20)
    force_dice(t.state, 1, 2)
    events = t.do(Roll(nxt))
    assert events[0] == RentClaimLapsed(b) and not t.state.claim
    refused(t, ClaimRent(b), "H2")


# -- H3-H6: the short and timed games ---------------------------------------------------------------------------


def test_H3_short_game_8_page_two_deeds_bought_each_and_hotels_on_3_houses() -> None:
    state, events = new_game(hasbro_short_8(), [f"p{i}" for i in range(4)], 5)
    dealt = next(e for e in events if isinstance(e, DeedsDealt))
    assert len(dealt.squares) == 8 and sorted(dealt.owners) == [0, 0, 1, 1, 2, 2, 3, 3]
    for seat in range(4):
        paid = sum(p for p, s in zip(dealt.prices, dealt.owners, strict=True) if s == seat)
        assert state.players[seat].cash == 1500 - paid > 1500 - 800
    assert dealt.prices == tuple(state.config.board.squares[sq].price for sq in dealt.squares)
    t = Table(4, 5, hasbro_short_8())
    c = t.state.current
    for sq in range(40):  # the deal undone by hand: the bank keeps the prices paid
        t.state.owner[sq] = BANK
    _built(t, c, {1: 3, 3: 3})
    houses = t.state.bank_houses()
    assert BuildingBuilt(c, 1, 5, 50) in t.do(Build(c, 1))
    assert t.state.bank_houses() == houses + 3
    assert BuildingSold(c, 1, 3, 25) in t.do(SellBuilding(c, 1))


def test_H3_deeds_are_dealt_only_if_every_player_can_pay_them() -> None:
    with pytest.raises(RuleViolation) as info:
        new_game(hasbro_short_8(starting_cash=500), ["a", "b"], 1)
    assert info.value.rule == "H3"


def test_H4_short_game_6_page_three_deeds_free_each() -> None:
    state, events = new_game(hasbro_short_6(), [f"p{i}" for i in range(3)], 9)
    dealt = next(e for e in events if isinstance(e, DeedsDealt))
    assert len(dealt.squares) == 9 and set(dealt.prices) == {0}
    assert all(p.cash == 1500 for p in state.players)


@pytest.mark.parametrize(("make", "bankruptcies"), [(hasbro_short_8, 2), (hasbro_short_6, 1)])
def test_H3_H4_short_games_end_at_their_bankruptcy_by_the_H6_valuation(make: object, bankruptcies: int) -> None:
    for seed in range(4):
        state, _ = play_game(make(round_cap=500), 4, seed, "heuristic", think_ms=3000)  # type: ignore[operator]
        assert state.end_reason == "short_game" and len(state.eliminated) == bankruptcies
        active = state.active_seats
        best = max(state.net_worth(s) for s in active)
        assert state.net_worth(state.winner) == best and state.players[state.winner].place == 1
        assert sorted(p.place for p in state.players) == [1, 2, 3, 4]


def _short_game(mode: str) -> TableState:
    """A, with nothing, lands on B's St. Charles Place; B, with only that square, is next, 3 squares
    before C's Boardwalk (a hotel). C has the least cash and the most worth; D the most cash."""
    return Scenario(
        players=("A", "B", "C", "D"),
        mode=mode,
        cash={"A": 0, "B": 0, "C": 300, "D": 1000},
        positions={"A": 8, "B": 36},
        owners={"B": ["St. Charles Place"], "C": ["Park Place", "Boardwalk"]},
        buildings={"Park Place": 5, "Boardwalk": 5},
        dice=((1, 2),),
    ).state()


def test_H4_the_6_page_short_game_ends_at_the_first_bankruptcy_won_by_worth() -> None:
    state = _short_game("hasbro-short-6")
    events = apply(state, Roll(0))
    assert PlayerBankrupt(0, 1, 4) in events
    assert events[-1] == GameEnded(2, (4, 3, 1, 2), "short_game", state.game_ms, state.config.clock.scale)
    assert state.finished and state.winner == 2
    check_invariants(state)


def test_H3_the_8_page_short_game_plays_on_after_the_first_bankruptcy_and_ends_at_the_second() -> None:
    state = _short_game("hasbro-short-8")
    events = apply(state, Roll(0))
    assert PlayerBankrupt(0, 1, 4) in events and not any(isinstance(e, GameEnded) for e in events)
    assert not state.finished and state.current == 1
    force_dice(state, 1, 2)
    events = apply(state, Roll(1))  # onto Boardwalk: rent $2,000, B could raise $70
    assert PlayerBankrupt(1, 2, 3) in events
    assert events[-1] == GameEnded(2, (4, 3, 1, 2), "short_game", state.game_ms, state.config.clock.scale)
    assert state.finished and state.winner == 2
    check_invariants(state)


@pytest.mark.parametrize("minutes", [0, -5, 24 * 60 + 1, 10**30, 2**62, True, 60.0, "60", None])
def test_H5_a_time_limit_is_a_whole_number_of_minutes_up_to_a_day(minutes: object) -> None:
    with pytest.raises(ValueError, match="H5"):
        hasbro_time(time_limit_minutes=minutes)  # type: ignore[arg-type]
    assert hasbro_time(time_limit_minutes=24 * 60).time_limit_minutes == 24 * 60


def test_H5_the_time_limit_game_ends_at_the_agreed_time_by_worth() -> None:
    t = Table(3, 2, hasbro_time(time_limit_minutes=1))
    c = t.state.current
    give(t.state, c, 39)
    t.do(Tick(61_000))
    place(t.state, c, 15)
    force_dice(t.state, 2, 3)  # Free Parking
    t.do(Roll(c))
    events = t.do(EndTurn(c))
    ended = events[-1]
    assert isinstance(ended, GameEnded) and ended.reason == "time_limit" and ended.winner == c


def test_H6_worth_is_cash_plus_prices_mortgaged_at_half_plus_buildings_at_cost() -> None:
    t = Table(2, 1, hasbro_short_8())
    c = t.state.current
    for sq in range(40):
        t.state.owner[sq] = BANK
    _built(t, c, {1: 5, 3: 2})
    give(t.state, c, 39)
    t.state.mortgaged_round[39] = 0
    cash = t.state.players[c].cash
    assert t.state.net_worth(c) == cash + 60 + 4 * 50 + 60 + 2 * 50 + 200  # a hotel is 3 houses + 1 (H3)


# -- invariants and replay equality under the hasbro presets ------------------------------------------------------


PRESETS = [hasbro, hasbro_short_8, hasbro_short_6, lambda **kw: hasbro(rent_claims=True, **kw)]


@pytest.mark.parametrize("make", PRESETS)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_play_under_hasbro_keeps_every_guarantee(make: object, seed: int) -> None:
    cash = (1500, 1500, 800)[seed - 1] if make is hasbro_short_8 else (1500, 600, 300)[seed - 1]
    config = make(starting_cash=cash, round_cap=(None, 20)[seed % 2])  # type: ignore[operator]
    run_game(config, 2 + seed, seed, random.Random(seed), steps=300, state_round_trip_every=10)


class _EveryEvent:
    """Replays a game event by event beside it, checking the invariants after each."""

    def __init__(self, most: list[int]) -> None:
        self.log: list[engine.Event] = []
        self.shadow: TableState | None = None
        self.most = most

    def __call__(self, state: TableState, new: list[engine.Event]) -> None:
        self.log.extend(new)
        if self.shadow is None:
            self.shadow = replay(self.log)
            check_invariants(self.shadow, len(self.log))
            return
        shadow = self.shadow
        for event in new:
            engine.evolve(shadow, event)
            check_invariants(shadow)
            assert shadow.bank_houses() >= 0 and shadow.bank_hotels() >= 0  # P10: 32 houses, 12 hotels
        b = shadow.buildings
        self.most[0] = max(self.most[0], sum(b) - 5 * b.count(5))
        self.most[1] = max(self.most[1], b.count(5))


@pytest.mark.parametrize("make", [hasbro, hasbro_short_8, hasbro_short_6, hasbro_time])
def test_bot_games_under_hasbro_keep_the_invariants_after_every_event_and_replay(make: object) -> None:
    """Whole games of heuristic bots; after every event the invariants hold (money, owners, even
    building, cards in their places, never more than 32 houses and 12 hotels out), and the
    events replay to the same state."""
    most = [0, 0]  # houses, hotels out at most
    for seed in range(3):
        checker = _EveryEvent(most)
        state, _ = play_game(make(round_cap=300), 4, seed, "heuristic", on_events=checker, think_ms=3000)  # type: ignore[operator]
        assert state.finished and state.end_reason != "round_cap"
        assert state_to_data(replay(checker.log)) == state_to_data(state)
    most_houses, most_hotels = most
    assert 0 < most_houses <= 32 and most_hotels <= 12


def test_heuristic_bot_uses_jail_policies() -> None:
    t = table()
    c = t.state.current
    jail(t, c)
    bot = HeuristicBot(1)
    bot.jail_policy = "wait"
    assert isinstance(bot.choose(t.state, c), Roll)
    bot.jail_policy = "pay"
    assert isinstance(bot.choose(t.state, c), PayJailFine)


def test_P10_T6_heuristic_bot_acts_outside_its_turn_only_where_the_rules_let_it() -> None:
    t = table()
    c = t.state.current
    o, x = other(t.state, c), other(t.state, c, 2)
    give(t.state, o, 37, 39)
    assert HeuristicBot(1).any_time(t.state, o) == Build(o, 37)  # P10: builds while another is to act
    assert HeuristicBot(1).any_time(Table(4, 1, engine.classic()).state, o) is None  # online: only on its turn
    # T6: once a turn, an offer for the square that completes a group, its Get Out of Jail Free card included
    give(t.state, x, 39)
    hand(t.state, o, 8)
    offers = []
    for seed in range(20):
        bot = HeuristicBot(seed)
        offer = bot.any_time(t.state, o)
        if offer is not None:
            offers.append(offer)
            assert bot.any_time(t.state, o) is None
    assert offers and all(p == ProposeTrade(o, x, give_cash=600, take_squares=(39,), give_cards=(8,)) for p in offers)
    # the counterparty counts a card as worth the jail fine: $520 and the card for a $400 square, not $520 alone
    answers = []
    for cards in ((), (8,)):
        offered = t.state.copy()
        apply(offered, ProposeTrade(o, x, give_cash=520, take_squares=(39,), give_cards=cards))
        answers.append(type(HeuristicBot(1).choose(offered, x)))
    assert answers == [engine.DeclineTrade, AcceptTrade]


# -- external auctions (an auction service) for the hasbro reasons ------------------------------------------


def test_A2_D4_P10_external_auctions_carry_the_hasbro_bidding_rules() -> None:
    t = Table(4, 1, hasbro(external=("auction",)))
    c = t.state.current
    roll_onto(t, 39)
    events = t.do(engine.DeclineProperty(c))
    started = events[-1]
    assert isinstance(started, AuctionStarted) and started.reason == "declined"
    assert (started.start_price, started.increment, started.bid_ms) == (10, 1, 20_000)
    assert c in started.bidders and started.limits == tuple(1500 + 200 for _ in started.bidders)  # A3
    winner = started.bidders[0]
    events = t.do(engine.SettleAuction(BANK, started.auction_id, winner, 11))
    assert AuctionSettled(started.auction_id, 39, winner, 11) in events
    t.do(Pay(winner))
    assert t.state.owner[39] == winner
    # a building auction: what is won is a house, so no mortgage value counts toward the limit
    t2 = table()
    c = t2.state.current
    o, x = other(t2.state, c), other(t2.state, c, 2)
    t2.state.config = hasbro(external=("auction",))
    _built(t2, x, {31: 4, 32: 4, 34: 4, 26: 4, 27: 4, 29: 4})
    _built(t2, o, {11: 3, 13: 2, 14: 2})
    give(t2.state, c, 1, 3)
    started = t2.do(Build(c, 1))[-1]
    assert isinstance(started, AuctionStarted) and started.reason == "house"
    assert started.limits == (t2.state.raisable(o), t2.state.raisable(c))
    t2.do(engine.SettleAuction(BANK, started.auction_id, c, 10))
    t2.do(Pay(c))
    assert t2.state.won_buildings == [(c, 1)]


# -- the end of the game amid auctions, bankruptcies and payments (D4, D5, H3, H4, H6, M4) ------------------


def test_D4_properties_returned_during_another_auction_are_auctioned_when_it_ends() -> None:
    """C leaves while a declined square is auctioned: C's squares wait for that auction's end, then go
    to auction one after another, never left with the bank to be bought by whoever lands there."""
    scenario = Scenario(
        players=("A", "B", "C"), mode="hasbro", positions={"A": 3}, owners={"C": [11, 13, 5]}, dice=((1, 2),)
    )
    state = scenario.state()
    apply(state, Roll(0))
    apply(state, engine.DeclineProperty(0))  # Oriental Avenue: B, C, then A bid
    apply(state, engine.Leave(2))
    assert state.auction is not None and state.auction.square == 6 and state.auction_queue == [5, 11, 13]
    apply(state, Bid(1, 10))
    events = apply(state, PassBid(0))
    assert AuctionSettled(1, 6, 1, 10) in events
    (started,) = [e for e in events if isinstance(e, AuctionStarted)]
    assert (started.square, started.reason) == (5, "bankrupt") and state.auction_queue == [11, 13]
    check_invariants(state)


def test_D5_M4_a_creditor_bankrupted_by_the_fees_of_what_they_received_ends_the_game_once() -> None:
    """A goes bankrupt to B, whose M4 fees on A's mortgaged squares bankrupt B too: one GameEnded."""
    mortgaged = [37, 39, 31, 32, 34, 26, 27, 29]
    scenario = Scenario(
        players=("A", "B", "C"),
        mode="hasbro",
        cash={"A": 0, "B": 0, "C": 500},
        positions={"A": 8},
        owners={"A": mortgaged, "B": [11]},
        mortgaged=mortgaged,
        dice=((1, 2),),
    )
    state = scenario.state()
    events = apply(state, Roll(0))  # onto B's St. Charles Place, rent A cannot pay
    ended = [e for e in events if isinstance(e, GameEnded)]
    assert len(ended) == 1 and ended[0].winner == 2 and isinstance(events[-1], GameEnded)
    assert replay([*scenario.events(), *events]) is not None


def test_H3_M4_a_short_game_ended_by_a_nested_bankruptcy_plays_no_further_turn() -> None:
    mortgaged = [37, 39, 31, 32, 34, 26, 27, 29]
    scenario = Scenario(
        players=("A", "B", "C", "D"),
        mode="hasbro-short-8",
        cash={"A": 0, "B": 0, "C": 500, "D": 500},
        positions={"A": 8},
        owners={"A": mortgaged, "B": [11]},
        mortgaged=mortgaged,
        dice=((1, 2),),
    )
    state = scenario.state()
    events = apply(state, Roll(0))
    assert isinstance(events[-1], GameEnded) and events[-1].reason == "short_game"
    assert sum(isinstance(e, GameEnded) for e in events) == 1
    assert state.turn_no == scenario.state().turn_no


def test_H4_H6_a_won_square_not_yet_paid_for_counts_as_paid_and_the_payment_ends_with_the_game() -> None:
    """B won Boardwalk for $600 and owes it when C's leaving ends the 6-page game: B is worth what B would
    be after paying ($300 + $400), less than A's $1,000, and the finished game owes nothing."""
    scenario = Scenario(
        players=("A", "B", "C"),
        mode="hasbro-short-6",
        cash={"A": 1000, "B": 900, "C": 100},
        positions={"A": 36},
        dice=((1, 2),),
    )
    state = scenario.state()
    apply(state, Roll(0))
    apply(state, engine.DeclineProperty(0))  # Boardwalk: B, C, then A bid
    apply(state, Bid(1, 600))
    apply(state, PassBid(2))
    apply(state, PassBid(0))
    assert state.payments and state.net_worth(1) == 900 - 600 + 400
    events = apply(state, engine.Leave(2))
    assert events[-1] == GameEnded(0, (1, 2, 3), "short_game", state.game_ms, state.config.clock.scale)
    assert state.payments == []
    check_invariants(state)


def test_D4_the_returned_properties_of_the_player_whose_turn_it_was_are_auctioned_after_the_turn_passes() -> None:
    """The current player leaves as the last to answer in an auction: it settles, the turn passes, and
    only then are the leaver's squares auctioned, the bidding starting after the new current player."""
    scenario = Scenario(players=("a", "b", "c", "d"), mode="hasbro", turn=1, owners={"b": [39, 37]}, dice=((1, 2),))
    state = scenario.state()
    apply(state, Roll(1))
    apply(state, engine.DeclineProperty(1))
    apply(state, Bid(2, 10))
    apply(state, PassBid(3))
    apply(state, PassBid(0))
    events = apply(state, engine.Leave(1))
    kinds = [type(e).__name__ for e in events]
    assert kinds.index("TurnStarted") < kinds.index("AuctionStarted")
    (started,) = [e for e in events if isinstance(e, AuctionStarted)]
    assert state.current == 2 and started.bidders == (3, 0, 2)


@pytest.mark.parametrize("external", [(), ("auction",)], ids=["table", "auction service"])
def test_E5_D4_properties_returned_during_a_pause_are_auctioned_at_the_resume(external: tuple[str, ...]) -> None:
    """A player leaves while the table is paused: their squares wait in the D4 queue, and the first
    auction opens with the resume (an auction service would otherwise run its bid clock meanwhile)."""
    config = hasbro(external=external) if external else hasbro()
    scenario = Scenario(players=("a", "b", "c", "d"), config=config, owners={"b": [39, 37]}, dice=((1, 2),))
    state = scenario.state()
    events = list(scenario.events())
    events += apply(state, engine.RequestPause(0))
    for seat in (1, 2, 3):
        events += apply(state, engine.VotePause(seat, True))
    left = apply(state, engine.Leave(1))
    events += left
    assert not any(isinstance(e, AuctionStarted) for e in left)
    assert state.auction is None and state.auction_queue == [37, 39]
    check_invariants(state)
    for seat in (0, 2, 3):
        events += apply(state, engine.ConfirmBack(seat))
    resumed = apply(state, Tick(state.resume_at))
    events += resumed
    assert [type(e).__name__ for e in resumed][-2:] == ["GameResumed", "AuctionStarted"]
    assert state.auction is not None and state.auction.square == 37 and state.auction_queue == [39]
    check_invariants(state)
    assert replay(events) == state


def test_A3_D5_no_limits_are_sent_after_the_game_ends_and_a_bankrupt_bidders_limit_is_0() -> None:
    scenario = Scenario(players=("a", "b", "c"), config=hasbro(external=("auction",)), dice=((1, 2),))
    state = scenario.state()
    apply(state, Roll(0))
    apply(state, engine.DeclineProperty(0))
    apply(state, engine.Leave(2))
    assert state.auction is not None
    assert state.auction.limits[state.auction.bidders.index(2)] == 0
    events = apply(state, engine.Leave(1))
    assert isinstance(events[-1], GameEnded)


def test_C2_M4_collecting_stops_when_the_drawer_goes_bankrupt_too() -> None:
    """The first payer's bankruptcy hands the drawer a mortgaged Boardwalk whose M4 fee the drawer
    cannot pay: the drawer is out, and nobody else is charged for them."""
    scenario = Scenario(
        players=("d", "o1", "o2", "o3"),
        mode="hasbro",
        cash={"d": 0, "o1": 5},
        owners={"o1": ["Boardwalk"], "o2": [3]},
        mortgaged=["Boardwalk"],
        chest=(108, *range(100, 108), *range(109, 116)),
        dice=((1, 1),),
    )
    state = scenario.state()
    apply(state, Roll(0))  # onto Community Chest 2: "It is your birthday"
    assert state.players[0].bankrupt and state.players[1].bankrupt
    assert not [p for p in state.payments if p.creditor == 0]
    check_invariants(state)


def test_D4_P1_a_square_waiting_for_its_bank_auction_is_not_offered_to_whoever_lands_on_it() -> None:
    scenario = Scenario(
        players=("a", "b", "c", "d"),
        mode="hasbro",
        cash={"a": 20},
        owners={"a": [39], "b": [11, 13]},
        jail={"a": 2},
        dice=((1, 2),),
    )
    state = scenario.state()
    apply(state, Roll(0))  # a third failed roll in jail: the fine, then the move (J4)
    apply(state, engine.Leave(1))  # b's squares go to the bank: 11 auctioned now, 13 waits
    assert state.auction is not None and state.auction.square == 11 and state.auction_queue == [13]
    apply(state, Mortgage(0, 39))
    events = apply(state, Pay(0))  # a pays and moves 10 + 3 = 13
    assert state.players[0].position == 13
    assert not [e for e in events if isinstance(e, engine.PurchaseOffered)]
    assert state.offer != 13
    check_invariants(state)
