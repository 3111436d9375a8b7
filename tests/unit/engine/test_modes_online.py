"""X2-X6: the online modes Speed, Duel, Team 2v2 and Custom, and the speed die.

Scenarios steer the dice through the table's counter-based generator (the
engine is never patched). The speed die is draw `counter + 2` of a roll, so
`force_speed` looks for a counter whose three draws give the wanted white
dice and speed-die face. Tests that edit the state by hand (`give`, `place`,
the round, the clock) check the invariants after every command, not replay
equality; the whole games at the end check both in every mode.
"""

from __future__ import annotations

import pytest

import engine
from bots import RandomBot
from engine import (
    BANK,
    AcceptTrade,
    AuctionMortgaged,
    AuctionSettled,
    AuctionStarted,
    BankPaid,
    Bid,
    BoardDealt,
    Build,
    BuildingDemolished,
    BuildingSold,
    BusMoveChosen,
    BuyProperty,
    CardDrawn,
    ChoiceOffered,
    ChooseBusMove,
    ChooseSquare,
    DeckShuffled,
    Demolish,
    DiceRolled,
    EndTurn,
    Event,
    GameEnded,
    Mortgage,
    MortgageExpired,
    Moved,
    MrMonopolyMoved,
    PassBid,
    Pay,
    PaymentDue,
    PaymentMade,
    Phase,
    PlayerBankrupt,
    ProposeTrade,
    PurchaseOffered,
    Roll,
    RuleViolation,
    SellBuilding,
    SquareChosen,
    Surrender,
    TableConfig,
    Tick,
    TradeExecuted,
    TurnTimedOut,
    classic,
    new_game,
    preset,
    rng,
    teammates,
)
from engine.codec import state_to_data
from engine.config import CUSTOM_BOUNDS, custom, duel, rule_card, speed, team
from engine.errors import SettingRefused
from engine.game import SPEED_BUS, SPEED_FACES, SPEED_MR_MONOPOLY

from .helpers import Table, force_dice, give, place, set_cash

MR = SPEED_MR_MONOPOLY
BUS = SPEED_BUS
LIGHT_BLUE = (6, 8, 9)  # group 2, buildings $500


# -- helpers -----------------------------------------------------------------------------------


def force_speed(state: engine.TableState, d1: int, d2: int, face: int) -> None:
    """Move the generator so the next roll is white dice (d1, d2) and speed-die `face`."""
    counter = state.rng_counter
    while True:
        if (
            rng.dice(state.rng_seed, counter) == (d1, d2)
            and SPEED_FACES[rng.die(state.rng_seed, counter + 2) - 1] == face
        ):
            state.rng_counter = counter
            return
        counter += 1


def speed_table(players: int = 2, seed: int = 3, config: TableConfig | None = None) -> Table:
    """A table in round 8, where the speed die has joined (X2, X6)."""
    t = Table(players, seed=seed, config=config or speed())
    t.state.round = 8
    return t


def of(events: list[Event], kind: type) -> list:
    return [e for e in events if isinstance(e, kind)]


def quiet_turn(t: Table) -> list[Event]:
    """The current player goes 36 -> Start with 1+3 (salary, nothing to decide) and ends the turn."""
    seat = t.state.current
    place(t.state, seat, 36)
    force_dice(t.state, 1, 3)
    events = t.do(Roll(seat))
    assert t.state.phase is Phase.POST_ROLL, events
    return events + t.do(EndTurn(seat))


def opponent(t: Table, seat: int) -> int:
    return next(s for s in t.state.order if s != seat and not teammates(t.state, seat, s))


# -- X2: Speed ---------------------------------------------------------------------------------


def test_X2_speed_preset_values() -> None:
    cfg = speed()
    assert cfg.mode == "speed" and preset("speed") == cfg
    assert (cfg.min_players, cfg.max_players) == (2, 5)
    assert cfg.starting_cash == 17500
    assert cfg.even_build is False
    assert cfg.builds_per_group_per_turn == 1  # P9 still limits Speed
    assert cfg.building_sale_percent == 100
    assert (cfg.clock.turn_seconds, cfg.clock.salary_stop_minute, cfg.clock.tax_start_minute) == (45, 30, 40)
    assert cfg.speed_die_from_round == 8


@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_X2_speed_takes_2_to_5_players_with_17500_each(players: int) -> None:
    state, events = new_game(speed(), [f"p{i}" for i in range(players)], seed=5)
    assert [p.cash for p in state.players] == [17500] * players
    assert not of(events, BoardDealt)
    engine.check_invariants(state, len(events))


@pytest.mark.parametrize("players", [1, 6])
def test_X2_speed_refuses_other_player_counts(players: int) -> None:
    with pytest.raises(RuleViolation):
        new_game(speed(), [f"p{i}" for i in range(players)], seed=5)


def test_X2_speed_builds_unevenly_but_once_per_group_per_turn() -> None:
    t = Table(2, seed=1, config=speed())
    a = t.state.current
    give(t.state, a, *LIGHT_BLUE)
    t.do(Build(a, 6))
    with pytest.raises(RuleViolation) as err:
        t.do(Build(a, 6))  # P9: one build action per colour group per turn, also in Speed
    assert err.value.rule == "P9"
    with pytest.raises(RuleViolation) as err:
        t.do(Build(a, 8))  # the limit is per group, not per square
    assert err.value.rule == "P9"
    quiet_turn(t)
    quiet_turn(t)  # the other player's turn; back to a
    assert t.state.current == a
    t.do(Build(a, 6))  # 2 on one square while the others of the group have none: uneven is allowed
    assert [t.state.buildings[sq] for sq in LIGHT_BLUE] == [2, 0, 0]
    # selling is not held to evenness either, and returns the full cost (P8)
    quiet_turn(t)
    quiet_turn(t)
    t.do(Build(a, 8))
    cash = t.state.players[a].cash
    events = t.do(SellBuilding(a, 8))  # 8 has 1 while 6 has 2
    assert events == [BuildingSold(a, 8, 0, 500)]
    assert t.state.players[a].cash == cash + 500


def test_X2_classic_refuses_the_same_uneven_build() -> None:
    t = Table(2, seed=1, config=classic())
    a = t.state.current
    give(t.state, a, *LIGHT_BLUE)
    t.do(Build(a, 6))
    quiet_turn(t)
    quiet_turn(t)
    with pytest.raises(RuleViolation) as err:
        t.do(Build(a, 6))
    assert err.value.rule == "P6"


@pytest.mark.parametrize(
    ("name", "config", "seconds"),
    [
        ("classic", classic(), 75),
        ("speed", speed(), 45),
        ("duel", duel(), 45),
        ("team", team(), 75),
        ("custom", custom(turn_seconds=30), 30),
    ],
)
def test_X2_X3_X5_turn_timer_of_each_mode(name: str, config: TableConfig, seconds: int) -> None:
    players = {"duel": 3, "team": 4}.get(name, 2)
    t = Table(players, seed=2, config=config)
    seat = t.state.current
    assert t.state.turn_deadline == seconds * 1000
    events = t.do(Tick(seconds * 1000 - 1))
    assert not of(events, TurnTimedOut)
    events = t.do(Tick(seconds * 1000))
    assert of(events, TurnTimedOut)[0] == TurnTimedOut(seat, 1)
    assert of(events, DiceRolled)  # E2: the game rolls for the player


def _minute_clock(t: Table, minute: int) -> None:
    """Set the table's clock to the start of game minute `minute` (minutes count from 1)."""
    t.state.clock = (minute - 1) * 60_000
    t.state.turn_deadline = t.state.clock + 10 * 60_000


def _pass_start_at_minute(config: TableConfig, players: int, minute: int) -> list[Event]:
    t = Table(players, seed=4, config=config)
    _minute_clock(t, minute)
    seat = t.state.current
    place(t.state, seat, 36)
    force_dice(t.state, 1, 3)
    return [e for e in t.do(Roll(seat)) if isinstance(e, BankPaid) and e.seat == seat]


def _rent_at_minute(config: TableConfig, players: int, minute: int, square: int = 39) -> tuple[PaymentDue, int]:
    """The rent due on landing on an opponent's `square` at `minute`, and what the owner got once paid."""
    t = Table(players, seed=4, config=config)
    _minute_clock(t, minute)
    seat = t.state.current
    owner = opponent(t, seat)
    give(t.state, owner, square)
    place(t.state, seat, (square - 3) % 40)
    force_dice(t.state, 1, 2)
    (due,) = of(t.do(Roll(seat)), PaymentDue)
    assert (due.debtor, due.creditor, due.reason) == (seat, owner, "rent")
    cash = t.state.players[owner].cash
    t.do(Pay(seat))
    return due, t.state.players[owner].cash - cash


CLOCKS = [
    ("classic", classic(), 2, 46, 61),
    ("speed", speed(), 2, 30, 40),
    ("duel", duel(), 3, 30, 40),
    ("custom", custom(salary_stop_minute=10, tax_start_minute=20), 2, 10, 20),
]


@pytest.mark.parametrize(("name", "config", "players", "stop", "tax"), CLOCKS)
def test_X2_X3_X5_salary_stops_at_the_mode_minute(
    name: str, config: TableConfig, players: int, stop: int, tax: int
) -> None:
    paid = _pass_start_at_minute(config, players, stop - 1)
    assert [(e.amount, e.reason) for e in paid] == [(2000, "salary"), (1000, "start_bonus")]
    assert _pass_start_at_minute(config, players, stop) == []


@pytest.mark.parametrize(("name", "config", "players", "stop", "tax"), CLOCKS)
def test_X2_X3_X5_rent_tax_starts_at_the_mode_minute(
    name: str, config: TableConfig, players: int, stop: int, tax: int
) -> None:
    before, received = _rent_at_minute(config, players, tax - 1)
    assert before.bank_share == 0 and received == before.amount
    at, received = _rent_at_minute(config, players, tax)
    assert at.amount == before.amount and at.amount > 0
    assert at.bank_share == at.amount * 50 // 100
    assert received == at.amount - at.bank_share  # E4: that share goes to the bank, not the owner


def test_E4_the_banks_share_of_a_taxed_rent_is_rounded_down_and_the_owner_keeps_the_odd_dollars() -> None:
    """At 99% (minute 86 on) the bank's share of FreshMart's $20 is $19.80: the bank takes $19, the owner $1."""
    due, received = _rent_at_minute(classic(), 2, 90, square=1)
    assert (due.amount, due.bank_share, received) == (20, 19, 1)


# -- X6 via the modes: when the speed die joins --------------------------------------------------


@pytest.mark.parametrize(
    ("name", "config", "players"),
    [("speed", speed(), 2), ("duel", duel(), 3), ("custom", custom(speed_die=True), 2)],
)
def test_X2_X3_X5_speed_die_only_from_round_8(name: str, config: TableConfig, players: int) -> None:
    t = Table(players, seed=6, config=config)
    seat = t.state.current
    force_speed(t.state, 1, 2, 3)
    before = t.state.rng_counter
    for rnd, speed_face, draws in ((7, 0, 2), (8, 3, 3)):
        t.state.round = rnd
        twin = t.state.copy()
        events = engine.apply(twin, Roll(seat))
        assert events[0] == DiceRolled(seat, 1, 2, speed_face)
        assert of(events, Moved)[0] == Moved(seat, 0, 3 + speed_face)
        assert twin.rng_counter == before + draws  # two or three dice drawn


@pytest.mark.parametrize(
    ("name", "config", "players"),
    [("classic", classic(), 2), ("team", team(), 4), ("custom", custom(speed_die=False), 2)],
)
def test_X6_no_speed_die_in_modes_without_it(name: str, config: TableConfig, players: int) -> None:
    t = Table(players, seed=6, config=config)
    t.state.round = 30
    seat = t.state.current
    for counter in range(0, 300, 3):
        t.state.rng_counter = counter
        assert of(engine.decide(t.state, Roll(seat)), DiceRolled)[0].speed == 0


# -- X3: Duel --------------------------------------------------------------------------------------


def test_X3_duel_preset_values() -> None:
    cfg = duel()
    assert cfg.mode == "duel" and preset("duel") == cfg
    assert (cfg.min_players, cfg.max_players) == (3, 3)
    assert cfg.starting_cash == 25000
    assert cfg.deal_board and cfg.mortgage_auction
    assert cfg.even_build is False and cfg.builds_per_group_per_turn is None
    assert cfg.building_sale_percent == 75
    assert len(cfg.chance_deck) == 21 and len(classic().chance_deck) == 20
    assert cfg.speed_die_from_round == 8
    assert (cfg.clock.turn_seconds, cfg.clock.salary_stop_minute, cfg.clock.tax_start_minute) == (45, 30, 40)


@pytest.mark.parametrize("players", [2, 4])
def test_X3_duel_takes_exactly_3_players(players: int) -> None:
    with pytest.raises(RuleViolation) as err:
        new_game(duel(), [f"p{i}" for i in range(players)], seed=1)
    assert err.value.rule in ("X1", "X3")


def test_X3_duel_deals_the_board_evenly_at_random() -> None:
    state, events = new_game(duel(), ["a", "b", "c"], seed=7)
    (dealt,) = of(events, BoardDealt)
    purchasable = state.config.board.purchasable
    assert len(purchasable) == 28
    assert len(dealt.squares) == len(set(dealt.squares)) == 27
    assert set(dealt.squares) <= set(purchasable)
    counts = [sum(1 for sq in purchasable if state.owner[sq] == seat) for seat in range(3)]
    assert counts == [9, 9, 9]
    assert sum(1 for sq in purchasable if state.owner[sq] == BANK) == 1  # the remainder stays with the bank
    assert all(state.owner[sq] == seat for sq, seat in zip(dealt.squares, dealt.owners, strict=True))
    assert [p.cash for p in state.players] == [25000] * 3  # dealt, not sold
    assert not any(state.buildings) and all(r < 0 for r in state.mortgaged_round)
    assert of(events, DeckShuffled)[0].cards and len(of(events, DeckShuffled)[0].cards) == 21
    assert state.phase is Phase.PRE_ROLL
    engine.check_invariants(state, len(events))
    # deterministic by seed, different between seeds
    again, _ = new_game(duel(), ["a", "b", "c"], seed=7)
    assert again.owner == state.owner
    deals = {tuple(new_game(duel(), ["a", "b", "c"], seed=s)[0].owner) for s in range(8)}
    assert len(deals) > 1
    leftovers = {next(sq for sq in purchasable if owner[sq] == BANK) for owner in deals}
    assert len(leftovers) > 1  # the square left with the bank is random too


def test_X3_duel_builds_without_turn_limit_and_sells_at_75_percent() -> None:
    t = Table(3, seed=1, config=duel())
    a = t.state.current
    give(t.state, a, *LIGHT_BLUE)
    cash = t.state.players[a].cash
    for _ in range(3):
        t.do(Build(a, 6))
    t.do(Build(a, 8))
    t.do(Build(a, 6))
    assert [t.state.buildings[sq] for sq in LIGHT_BLUE] == [4, 1, 0]
    assert t.state.players[a].cash == cash - 5 * 500
    events = t.do(SellBuilding(a, 8))  # uneven selling too
    assert events == [BuildingSold(a, 8, 0, 375)]  # P8: 75% of $500
    assert t.state.players[a].cash == cash - 5 * 500 + 375


def _duel_with_mortgage() -> tuple[Table, int, int]:
    t = Table(3, seed=9, config=duel())
    seller = t.state.current
    sq = next(sq for sq in t.state.config.board.purchasable if t.state.owner[sq] == seller)
    t.do(Mortgage(seller, sq))
    return t, seller, sq


def test_X3_owner_auctions_own_mortgaged_property_at_full_price() -> None:
    t, seller, sq = _duel_with_mortgage()
    price = t.state.config.board.squares[sq].price
    lift = price * 60 // 100  # M2 online: the mortgage value (half) plus 10% = 60% of the price
    assert t.state.config.lift_cost(price) == lift
    assert AuctionMortgaged(seller, sq) in engine.legal_commands(t.state, seller)
    events = t.do(AuctionMortgaged(seller, sq))
    (started,) = of(events, AuctionStarted)
    assert started.square == sq and started.start_price == price and started.seller == seller
    assert seller not in started.bidders and len(started.bidders) == 2
    winner, other = started.bidders
    cash = [p.cash for p in t.state.players]
    bank_in = t.state.bank_in
    with pytest.raises(RuleViolation):
        t.do(Bid(winner, price - 100))  # starts at the full price
    t.do(Bid(winner, price))
    events = t.do(PassBid(other))
    assert of(events, AuctionSettled) == [AuctionSettled(started.auction_id, sq, winner, price)]
    (due,) = of(events, PaymentDue)
    assert (due.debtor, due.creditor, due.amount, due.bank_share) == (winner, seller, price, lift)
    t.do(Pay(winner))
    assert t.state.owner[sq] == winner
    assert t.state.mortgaged_round[sq] == -1  # the winner gets it unmortgaged
    assert t.state.players[seller].cash == cash[seller] + price - lift
    assert t.state.players[winner].cash == cash[winner] - price
    assert t.state.players[other].cash == cash[other]
    assert t.state.bank_in == bank_in + lift
    assert t.state.phase is Phase.PRE_ROLL and t.state.current == seller  # the turn goes on
    assert t.replay_matches()


def test_X3_mortgage_auction_without_bids_leaves_the_property_with_its_owner() -> None:
    t, seller, sq = _duel_with_mortgage()
    mortgaged = t.state.mortgaged_round[sq]
    cash = [p.cash for p in t.state.players]
    (started,) = of(t.do(AuctionMortgaged(seller, sq)), AuctionStarted)
    t.do(PassBid(started.bidders[0]))
    events = t.do(PassBid(started.bidders[1]))
    assert of(events, AuctionSettled)[0].winner == BANK
    assert not of(events, PaymentDue)
    assert t.state.owner[sq] == seller and t.state.mortgaged_round[sq] == mortgaged
    assert [p.cash for p in t.state.players] == cash
    assert t.replay_matches()


def test_X3_R3_the_sellers_leaving_calls_the_sale_off() -> None:
    """Leaving sends the square to the bank with the rest of the seller's holdings, so nothing is left
    to sell: the auction ends unsold, and nobody pays the seller who is out."""
    t, seller, sq = _duel_with_mortgage()
    (started,) = of(t.do(AuctionMortgaged(seller, sq)), AuctionStarted)
    t.do(Bid(started.bidders[0], t.state.config.board.squares[sq].price))
    events = t.do(engine.Leave(seller))
    assert of(events, AuctionSettled) == [AuctionSettled(started.auction_id, sq, BANK, 0)]
    assert not of(events, PaymentDue)
    assert t.state.auction is None and t.state.owner[sq] == BANK and t.state.mortgaged_round[sq] == -1
    assert t.state.current != seller and t.state.phase is Phase.PRE_ROLL
    assert t.replay_matches()


def test_X3_R3_a_seller_who_leaves_before_being_paid_forgoes_the_price_but_the_bank_keeps_its_lifting_cost() -> None:
    """The payment to the leaver is dropped (R3), all but the bank's share of it: the winner, who got the
    square unmortgaged, still owes the bank the lifting cost."""
    t, seller, sq = _duel_with_mortgage()
    price = t.state.config.board.squares[sq].price
    (started,) = of(t.do(AuctionMortgaged(seller, sq)), AuctionStarted)
    winner, other = started.bidders
    t.do(Bid(winner, price))
    t.do(PassBid(other))
    t.do(engine.Leave(seller))
    assert [(p.debtor, p.creditor, p.amount, p.bank_share) for p in t.state.payments] == [
        (winner, BANK, t.state.config.lift_cost(price), 0)
    ]
    cash, bank_in = t.state.players[winner].cash, t.state.bank_in
    t.do(Pay(winner))
    assert t.state.players[winner].cash == cash - t.state.config.lift_cost(price)
    assert t.state.bank_in == bank_in + t.state.config.lift_cost(price)
    assert t.state.owner[sq] == winner and t.state.mortgaged_round[sq] == -1
    assert t.replay_matches()


def test_X3_no_owner_sale_while_deciding_a_purchase() -> None:
    """The decision: in the pre- or post-roll phase of one's own turn, not with an offer open."""
    scenario = engine.Scenario(
        players=("a", "b", "c"), mode="duel", owners={0: [39, 37], 1: [1, 3]}, mortgaged=[39], dice=((2, 4),)
    )
    state = scenario.state()
    engine.apply(state, Roll(0))  # onto 6, the bank's
    assert state.phase is Phase.BUY and state.offer == 6
    assert AuctionMortgaged(0, 39) not in engine.legal_commands(state, 0)
    with pytest.raises(RuleViolation) as err:
        engine.apply(state, AuctionMortgaged(0, 39))
    assert err.value.rule == "X3"
    engine.apply(state, engine.BuyProperty(0))
    assert AuctionMortgaged(0, 39) in engine.legal_commands(state, 0)  # post-roll: allowed


def test_X3_mortgage_auction_refusals() -> None:
    t, seller, _ = _duel_with_mortgage()
    unmortgaged = next(
        s for s in t.state.config.board.purchasable if t.state.owner[s] == seller and t.state.mortgaged_round[s] < 0
    )
    others = next(s for s in t.state.config.board.purchasable if t.state.owner[s] not in (seller, BANK))
    for square in (unmortgaged, others):
        with pytest.raises(RuleViolation) as err:
            t.do(AuctionMortgaged(seller, square))
        assert err.value.rule == "X3"
    # not in the other modes
    s = Table(2, seed=1, config=speed())
    a = s.state.current
    give(s.state, a, 39)
    s.do(Mortgage(a, 39))
    with pytest.raises(RuleViolation) as err:
        s.do(AuctionMortgaged(a, 39))
    assert err.value.rule == "X3"
    assert not [c for c in engine.legal_commands(s.state, a) if isinstance(c, AuctionMortgaged)]


def _draw_demolition(t: Table, seat: int) -> list[Event]:
    """`seat` goes 0 -> 7 (chance) and draws the demolition card (put on top of the pile)."""
    t.state.deck.remove(20)
    t.state.deck.insert(0, 20)
    place(t.state, seat, 0)
    force_dice(t.state, 3, 4)
    return t.do(Roll(seat))


def test_X3_demolition_card_removes_one_level_from_an_opponent() -> None:
    t = Table(3, seed=1, config=duel())
    drawer = t.state.current
    victim = opponent(t, drawer)
    give(t.state, victim, *LIGHT_BLUE)
    t.state.buildings[6], t.state.buildings[8] = 3, 1
    give(t.state, drawer, 1, 3)
    t.state.buildings[1] = 2  # the drawer's own building is no target
    assert t.state.config.chance_deck[20].effect is engine.Effect.DEMOLISH
    cash = [p.cash for p in t.state.players]
    events = _draw_demolition(t, drawer)
    assert of(events, CardDrawn) == [CardDrawn(drawer, "chance", 20)]
    assert of(events, ChoiceOffered) == [ChoiceOffered(drawer, "demolish")]
    assert t.state.phase is Phase.CHOICE
    assert sorted(c.square for c in engine.legal_commands(t.state, drawer)) == [6, 8]
    for bad in (1, 9, 39):  # own building, no building, not a built square
        with pytest.raises(RuleViolation) as err:
            t.do(Demolish(drawer, bad))
        assert err.value.rule == "C4"
    with pytest.raises(RuleViolation):
        t.do(EndTurn(drawer))
    events = t.do(Demolish(drawer, 6))
    assert events == [BuildingDemolished(drawer, 6, 2)]
    assert [t.state.buildings[sq] for sq in LIGHT_BLUE] == [2, 1, 0]
    assert [p.cash for p in t.state.players] == cash  # no refund, no cost
    assert t.state.phase is Phase.POST_ROLL


def test_X3_demolition_card_without_targets_offers_no_choice() -> None:
    t = Table(3, seed=1, config=duel())
    drawer = t.state.current
    events = _draw_demolition(t, drawer)
    assert of(events, CardDrawn) == [CardDrawn(drawer, "chance", 20)]
    assert not of(events, ChoiceOffered)
    assert t.state.phase is Phase.POST_ROLL


# -- X4: Team 2v2 ----------------------------------------------------------------------------------


def test_X4_team_preset_and_exactly_4_players() -> None:
    cfg = team()
    assert cfg.mode == "team" and cfg.teams and preset("team") == cfg
    assert (cfg.min_players, cfg.max_players, cfg.starting_cash) == (4, 4, 15000)
    state, _ = new_game(cfg, ["a", "b", "c", "d"], seed=1)
    assert [p.cash for p in state.players] == [15000] * 4
    for players in (2, 3, 5):
        with pytest.raises(RuleViolation) as err:
            new_game(cfg, [f"p{i}" for i in range(players)], seed=1)
        assert err.value.rule in ("X1", "X4")


def test_X4_seats_0_and_2_play_against_1_and_3() -> None:
    state, _ = new_game(team(), ["a", "b", "c", "d"], seed=1)
    pairs = {(a, b) for a in range(4) for b in range(4) if teammates(state, a, b)}
    assert pairs == {(0, 2), (2, 0), (1, 3), (3, 1)}
    classic_state, _ = new_game(classic(), ["a", "b", "c", "d"], seed=1)
    assert not any(teammates(classic_state, a, b) for a in range(4) for b in range(4))


@pytest.mark.parametrize("partner", [True, False])
def test_X4_teammates_pay_each_other_no_rent(partner: bool) -> None:
    t = Table(4, seed=2, config=team())
    seat = t.state.current
    owner = seat ^ 2 if partner else seat ^ 1
    give(t.state, owner, 39)
    place(t.state, seat, 36)
    force_dice(t.state, 1, 2)
    events = t.do(Roll(seat))
    if partner:
        assert not of(events, PaymentDue)
        assert t.state.phase is Phase.POST_ROLL
    else:
        assert of(events, PaymentDue) == [PaymentDue(seat, owner, 500, "rent", square=39)]


def test_X4_teammates_trade_mortgaged_and_unbalanced() -> None:
    t = Table(4, seed=2, config=team())
    seat = t.state.current
    partner, rival = seat ^ 2, seat ^ 1
    give(t.state, seat, 39, 37, 1)
    t.do(Mortgage(seat, 39))
    # with an opponent: T4 refuses the mortgaged square, T5 the lopsided terms
    with pytest.raises(RuleViolation) as err:
        t.do(ProposeTrade(seat, rival, give_squares=(39,), take_cash=2000))
    assert err.value.rule == "T4"
    with pytest.raises(RuleViolation) as err:
        t.do(ProposeTrade(seat, rival, give_squares=(37,)))  # $3,500 for nothing
    assert err.value.rule == "T5"
    # with the teammate: both allowed
    proposed = t.do(ProposeTrade(seat, partner, give_squares=(39, 37)))
    trade_id = proposed[0].trade_id
    events = t.do(AcceptTrade(partner, trade_id))
    assert of(events, TradeExecuted)
    assert t.state.owner[39] == t.state.owner[37] == partner
    assert t.state.mortgaged_round[39] >= 0  # still mortgaged


def test_X4_classic_refuses_mortgaged_trade_between_seats_0_and_2() -> None:
    t = Table(4, seed=2, config=classic())
    seat = t.state.current
    give(t.state, seat, 39)
    t.do(Mortgage(seat, 39))
    with pytest.raises(RuleViolation) as err:
        t.do(ProposeTrade(seat, seat ^ 2, give_squares=(39,), take_cash=2000))
    assert err.value.rule == "T4"


def test_X4_bankrupt_to_the_bank_passes_the_properties_to_the_teammate() -> None:
    t = Table(4, seed=2, config=team())
    seat = t.state.current
    partner = seat ^ 2
    give(t.state, seat, *LIGHT_BLUE, 39, 5)
    for sq in LIGHT_BLUE:
        t.state.buildings[sq] = 1
    t.do(Mortgage(seat, 39))
    partner_cash = t.state.players[partner].cash
    events = t.do(Surrender(seat))
    assert of(events, PlayerBankrupt)[0].creditor == BANK
    for sq in (*LIGHT_BLUE, 39, 5):
        assert t.state.owner[sq] == partner, sq
    assert t.state.players[partner].cash == partner_cash  # properties, not cash
    assert not t.state.finished


def test_X4_bankrupt_to_an_opponent_pays_the_opponent_not_the_teammate() -> None:
    t = Table(4, seed=2, config=team())
    seat = t.state.current
    partner, rival = seat ^ 2, seat ^ 1
    give(t.state, seat, 5, 15)
    give(t.state, rival, 39)
    place(t.state, seat, 36)
    force_dice(t.state, 1, 2)
    t.do(Roll(seat))
    assert t.state.phase is Phase.PAYMENT
    events = t.do(Surrender(seat))
    assert of(events, PlayerBankrupt)[0].creditor == rival
    assert t.state.owner[5] == t.state.owner[15] == rival
    assert partner not in t.state.owner


def test_X4_game_ends_when_one_team_is_left() -> None:
    t = Table(4, seed=2, config=team())
    give(t.state, 1, 39)
    events: list[Event] = []
    out: list[int] = []
    while not t.state.finished:
        seat = t.state.current
        if seat % 2 == 1:
            step = t.do(Surrender(seat))
            out.append(seat)
            if len(out) == 1:
                assert not t.state.finished  # the teammate plays on
                assert t.state.owner[39] == seat ^ 2  # X4: to the bank -> the teammate
        else:
            step = quiet_turn(t)
        events += step
        assert len(events) < 10_000
    assert sorted(out) == [1, 3]
    (ended,) = of(events, GameEnded)
    assert ended.reason == "last_team"
    assert ended.winner in (0, 2)
    assert ended.places == (1, 2, 1, 2)
    assert [p.place for p in t.state.players] == [1, 2, 1, 2]
    assert t.state.owner[39] == BANK  # the last of the team to go leaves it to the bank


def test_X4_H6_a_team_game_stopped_by_the_round_cap_is_placed_by_team() -> None:
    """The simulator's round cap ends a game by worth (H6); in Team 2v2 by team, as when one team is
    left (X4): the team worth more is 1st and its richest player the winner, though seat 0 is the
    richest player of all."""
    t = Table(4, seed=4, config=preset("team", round_cap=1))
    for seat, cash in enumerate((30_000, 20_000, 1_000, 25_000)):
        set_cash(t, seat, cash)
    events: list[Event] = []
    while not t.state.finished:
        events += quiet_turn(t)
    (ended,) = of(events, GameEnded)
    assert ended.reason == "round_cap"
    assert ended.places == (2, 1, 2, 1)  # seats 1 and 3: 45,000 and more against 31,000 and more
    assert ended.winner == 3
    assert [p.place for p in t.state.players] == [2, 1, 2, 1]


def test_X4_one_loser_on_each_team_does_not_end_the_game() -> None:
    t = Table(4, seed=2, config=team())
    gone: set[int] = set()
    while len(gone) < 2:
        seat = t.state.current
        if seat % 2 not in {s % 2 for s in gone}:
            t.do(Surrender(seat))
            gone.add(seat)
        else:
            quiet_turn(t)
    assert not t.state.finished
    assert len(t.state.active_seats) == 2


# -- X5: Custom --------------------------------------------------------------------------------------


def test_X5_custom_defaults_are_classic_rules() -> None:
    cfg = custom()
    base = classic()
    assert cfg.mode == "custom" and preset("custom") == cfg
    assert cfg.with_changes(mode="classic") == base
    assert rule_card(cfg) == "Custom table (2-5 players)\n  Classic rules, nothing changed"
    assert "nothing changed" in rule_card(base)


def test_X5_custom_starting_money_takes_effect() -> None:
    state, _ = new_game(custom(starting_cash=32000), ["a", "b", "c"], seed=1)
    assert [p.cash for p in state.players] == [32000] * 3


def test_X5_custom_salary_never_stops_when_unset() -> None:
    paid = _pass_start_at_minute(custom(salary_stop_minute=None, tax_start_minute=None), 2, 239)
    assert [e.reason for e in paid] == ["salary", "start_bonus"]
    assert _rent_at_minute(custom(tax_start_minute=None), 2, 239)[0].bank_share == 0


@pytest.mark.parametrize(("rounds", "expires_in"), [(3, 4), (1, 2), (7, 8), (None, None)])
def test_X5_custom_mortgage_rounds_take_effect(rounds: int | None, expires_in: int | None) -> None:
    t = Table(2, seed=1, config=custom(mortgage_rounds=rounds))
    a = t.state.current
    give(t.state, a, 39)
    t.do(Mortgage(a, 39))
    assert t.state.mortgaged_round[39] == 1
    expired_at = None
    for _ in range(2 * 10):
        events = quiet_turn(t)
        if of(events, MortgageExpired):
            assert of(events, MortgageExpired) == [MortgageExpired(a, 39)]
            assert t.state.current == a
            expired_at = t.state.round
            break
    assert expired_at == expires_in


@pytest.mark.parametrize(("mode", "allowed"), [("even", False), ("free", True)])
def test_X5_custom_build_mode_takes_effect(mode: str, allowed: bool) -> None:
    t = Table(2, seed=1, config=custom(build_mode=mode))
    a = t.state.current
    give(t.state, a, *LIGHT_BLUE)
    t.do(Build(a, 6))
    quiet_turn(t)
    quiet_turn(t)
    if allowed:
        t.do(Build(a, 6))
        assert t.state.buildings[6] == 2
    else:
        with pytest.raises(RuleViolation) as err:
            t.do(Build(a, 6))
        assert err.value.rule == "P6"


def test_X5_custom_speed_die_takes_effect() -> None:
    on, off = custom(speed_die=True), custom(speed_die=False)
    assert on.speed_die_from_round == 8 and off.speed_die_from_round is None


@pytest.mark.parametrize("name", sorted(CUSTOM_BOUNDS))
def test_X5_custom_refuses_out_of_bounds_values(name: str) -> None:
    bound = CUSTOM_BOUNDS[name]
    custom(**{name: bound.low})
    custom(**{name: bound.high})
    for bad in (bound.low - 1, bound.high + 1, 2.5, "60"):
        with pytest.raises(ValueError, match=name):
            custom(**{name: bad})
    if bound.none_allowed:
        custom(**{name: None})
    else:
        with pytest.raises(ValueError, match=name):
            custom(**{name: None})


def test_X5_custom_bounds_cover_every_host_setting() -> None:
    assert set(CUSTOM_BOUNDS) == {
        "starting_cash",
        "turn_seconds",
        "salary_stop_minute",
        "tax_start_minute",
        "mortgage_rounds",
    }
    with pytest.raises(ValueError, match="build_mode"):
        custom(build_mode="uneven")
    with pytest.raises(ValueError, match="speed_die"):
        custom(speed_die=1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="starting_cash"):
        custom(starting_cash=True)  # a bool is no amount
    with pytest.raises(SettingRefused, match=r"\[X5\] no setting starting_money; .* starting_cash"):
        custom(starting_money=20000)  # a misspelt setting is refused by name, not taken as the default


def test_X5_rule_card_lists_every_change_in_words() -> None:
    cfg = custom(
        starting_cash=20000,
        turn_seconds=30,
        salary_stop_minute=10,
        tax_start_minute=None,
        mortgage_rounds=3,
        build_mode="free",
        speed_die=True,
    )
    lines = rule_card(cfg).splitlines()
    assert lines[0] == "Custom table (2-5 players)"
    assert sorted(lines[1:]) == sorted(
        [
            "  Starting money: $20,000",
            "  Turn timer: 30 s",
            "  Salary stops: minute 10",
            "  Rent tax starts: never",
            "  Mortgage lost after: 3 rounds",
            "  Building: free (uneven)",
            "  Speed die: from round 8",
        ]
    )
    assert "nothing changed" not in rule_card(cfg)
    one = rule_card(custom(mortgage_rounds=None)).splitlines()
    assert one[1:] == ["  Mortgage lost after: never"]


def test_X5_rule_card_of_each_mode_shows_its_changes() -> None:
    card = rule_card(speed())
    assert card.splitlines()[0] == "Speed table (2-5 players)"
    for words in ("$17,500", "45 s", "minute 30", "minute 40", "free (uneven)", "from round 8"):
        assert words in card
    card = rule_card(team())
    assert card.splitlines()[0] == "Team table (4 players)" and "2 against 2" in card
    card = rule_card(duel())
    assert card.splitlines()[0] == "Duel table (3 players)"
    for words in ("$25,000", "no limit", "75% of cost", "Board dealt at the start: yes", "Chance cards: 21"):
        assert words in card


def test_X5_rule_card_of_duel_mentions_the_own_mortgage_auction() -> None:
    """X3/X5: the table card shows every change from Classic; Duel's mortgage auction is one."""
    card = rule_card(duel())
    assert "mortgag" in card.lower(), card


# -- X6: the speed die ----------------------------------------------------------------------------------


def test_X6_speed_die_face_frequencies() -> None:
    """Faces 1, 2, 3, Mr. Monopoly (x2), Bus over 6,000 rolls read from the engine's DiceRolled.

    Expected counts 1000/1000/1000/2000/1000; chi-square with 4 degrees of freedom,
    refused above 18.47 (p = 0.001). With a fixed seed the test is deterministic; the
    bound only says the mapping and the die are right (a wrong mapping, e.g. Mr. Monopoly
    once, gives chi-square in the hundreds at this sample size).
    """
    t = speed_table(2, seed=12345)
    seat = t.state.current
    n = 6000
    counts = dict.fromkeys((1, 2, 3, MR, BUS), 0)
    whites = [0] * 7
    for i in range(n):
        t.state.rng_counter = 3 * i  # each roll takes three fresh draws, as in play
        rolled = engine.decide(t.state, Roll(seat))[0]
        assert isinstance(rolled, DiceRolled)
        counts[rolled.speed] += 1
        whites[rolled.d1] += 1
        whites[rolled.d2] += 1
    expected = {1: n / 6, 2: n / 6, 3: n / 6, MR: n / 3, BUS: n / 6}
    chi2 = sum((counts[f] - expected[f]) ** 2 / expected[f] for f in counts)
    assert chi2 < 18.47, (counts, chi2)
    assert abs(counts[MR] / n - 1 / 3) < 4 * (2 / 9 / n) ** 0.5  # z-bound, 4 standard errors
    chi2_white = sum((whites[f] - 2 * n / 6) ** 2 / (2 * n / 6) for f in range(1, 7))
    assert chi2_white < 20.52  # 5 degrees of freedom, p = 0.001


@pytest.mark.parametrize(("d1", "d2", "face", "dest"), [(2, 3, 1, 6), (2, 3, 3, 8), (1, 2, 2, 5), (4, 1, 3, 8)])
def test_X6_a_number_adds_to_the_move(d1: int, d2: int, face: int, dest: int) -> None:
    t = speed_table()
    seat = t.state.current
    force_speed(t.state, d1, d2, face)
    events = t.do(Roll(seat))
    assert events[0] == DiceRolled(seat, d1, d2, face)
    assert of(events, Moved)[0] == Moved(seat, 0, dest)
    assert not of(events, MrMonopolyMoved) and not of(events, ChoiceOffered)


def test_X6_doubles_with_a_number_move_by_all_three_and_roll_again() -> None:
    t = speed_table()
    seat = t.state.current
    force_speed(t.state, 2, 2, 1)
    events = t.do(Roll(seat))
    assert of(events, Moved)[0] == Moved(seat, 0, 5)
    if t.state.phase is Phase.BUY:
        t.do(BuyProperty(seat))
    assert t.state.phase is Phase.PRE_ROLL and t.state.doubles == 1  # G3: doubles still count


@pytest.mark.parametrize(("steps", "dest"), [(2, 2), (3, 3), (5, 5)])
def test_X6_bus_moves_by_either_die_or_the_sum(steps: int, dest: int) -> None:
    t = speed_table()
    seat = t.state.current
    force_speed(t.state, 2, 3, BUS)
    events = t.do(Roll(seat))
    assert events[0] == DiceRolled(seat, 2, 3, BUS)
    assert of(events, ChoiceOffered) == [ChoiceOffered(seat, "bus")]
    assert not of(events, Moved)
    assert t.state.phase is Phase.CHOICE
    legal = engine.legal_commands(t.state, seat)
    assert sorted(c.steps for c in legal if isinstance(c, ChooseBusMove)) == [2, 3, 5]
    events = t.do(ChooseBusMove(seat, steps))
    assert events[:2] == [BusMoveChosen(seat, steps), Moved(seat, 0, dest)]


@pytest.mark.parametrize(("start", "face", "steps", "rent"), [(6, 1, None, 200), (9, BUS, 3, 160)])
def test_X6_P3_an_industrys_rent_counts_the_two_white_dice_whatever_the_speed_die_shows(
    start: int, face: int, steps: int | None, rent: int
) -> None:
    """Landing on an industry with a number on the speed die, or by the Bus on one die: the rent is
    the two white dice (2+3, 1+3) x 40 (P3 online, one industry owned)."""
    t = speed_table()
    seat = t.state.current
    owner = next(s for s in t.state.order if s != seat)
    give(t.state, owner, 12)
    place(t.state, seat, start)
    force_speed(t.state, *((2, 3) if steps is None else (1, 3)), face)
    events = t.do(Roll(seat))
    if steps is not None:
        events = t.do(ChooseBusMove(seat, steps))
    assert of(events, Moved)[0].to_square == 12  # type: ignore[attr-defined]
    (due,) = of(events, PaymentDue)
    assert (due.debtor, due.creditor, due.reason, due.amount) == (seat, owner, "rent", rent)


@pytest.mark.parametrize("steps", [0, 1, 4, 6, 7, -2])
def test_X6_bus_refuses_other_steps(steps: int) -> None:
    t = speed_table()
    seat = t.state.current
    force_speed(t.state, 2, 3, BUS)
    t.do(Roll(seat))
    with pytest.raises(RuleViolation) as err:
        t.do(ChooseBusMove(seat, steps))
    assert err.value.rule == "X6"
    with pytest.raises(RuleViolation) as err:
        t.do(ChooseSquare(seat, 4))  # no triple here
    assert err.value.rule == "X6"
    with pytest.raises(RuleViolation):
        t.do(Roll(seat))
    with pytest.raises(RuleViolation):
        t.do(ChooseBusMove(opponent(t, seat), 5))
    assert t.state.players[seat].position == 0


def test_X6_bus_time_out_takes_the_sum() -> None:
    t = speed_table()
    seat = t.state.current
    force_speed(t.state, 2, 3, BUS)
    t.do(Roll(seat))
    deadline = t.state.turn_deadline
    assert deadline == 45_000
    assert not of(t.do(Tick(deadline - 1)), BusMoveChosen)
    events = t.do(Tick(deadline))
    assert of(events, TurnTimedOut) == [TurnTimedOut(seat, 1)]
    assert of(events, BusMoveChosen) == [BusMoveChosen(seat, 5)]
    assert of(events, Moved)[0] == Moved(seat, 0, 5)


def test_X6_mr_monopoly_after_the_square_moves_to_the_nearest_unowned_property() -> None:
    t = speed_table()
    seat = t.state.current
    other = opponent(t, seat)
    give(t.state, other, 3)
    force_speed(t.state, 1, 2, MR)
    events = t.do(Roll(seat))
    assert events[0] == DiceRolled(seat, 1, 2, MR)
    assert of(events, Moved) == [Moved(seat, 0, 3)]
    assert of(events, PaymentDue) == [PaymentDue(seat, other, 40, "rent", square=3)]
    assert not of(events, MrMonopolyMoved)  # the square of the roll is resolved first
    events = t.do(Pay(seat))
    assert of(events, PaymentMade)
    assert of(events, MrMonopolyMoved) == [MrMonopolyMoved(seat, 5)]
    assert of(events, Moved) == [Moved(seat, 3, 5)]
    assert of(events, PurchaseOffered)[0].square == 5
    events = t.do(BuyProperty(seat))
    assert not of(events, MrMonopolyMoved)  # once per roll
    assert t.state.phase is Phase.POST_ROLL


def test_X6_mr_monopoly_waits_for_the_purchase_decision() -> None:
    t = speed_table()
    seat = t.state.current
    force_speed(t.state, 1, 2, MR)
    events = t.do(Roll(seat))
    assert of(events, PurchaseOffered)[0].square == 3 and not of(events, MrMonopolyMoved)
    events = t.do(BuyProperty(seat))
    assert of(events, MrMonopolyMoved) == [MrMonopolyMoved(seat, 5)]
    assert t.state.players[seat].position == 5 and t.state.offer == 5


def test_X6_mr_monopoly_else_the_nearest_opponent_property() -> None:
    t = speed_table(3)
    seat = t.state.current
    rival = opponent(t, seat)
    third = next(s for s in t.state.order if s not in (seat, rival))
    board = t.state.config.board
    give(t.state, rival, *board.purchasable)  # nothing unowned
    give(t.state, seat, 5, 6)  # own squares are skipped
    force_speed(t.state, 1, 2, MR)
    t.do(Roll(seat))  # 0 -> 3, the rival's: rent
    assert t.state.phase is Phase.PAYMENT
    give(t.state, third, 8, 9)  # any opponent counts, the nearest first
    events = t.do(Pay(seat))
    assert of(events, MrMonopolyMoved) == [MrMonopolyMoved(seat, 8)]
    assert of(events, Moved) == [Moved(seat, 3, 8)]
    (due,) = of(events, PaymentDue)
    assert (due.debtor, due.creditor, due.reason) == (seat, third, "rent")


def test_X6_mr_monopoly_stays_when_no_target() -> None:
    t = speed_table()
    seat = t.state.current
    give(t.state, seat, *t.state.config.board.purchasable)
    force_speed(t.state, 1, 2, MR)
    events = t.do(Roll(seat))
    assert of(events, MrMonopolyMoved) == [MrMonopolyMoved(seat, -1)]
    assert of(events, Moved) == [Moved(seat, 0, 3)]
    assert t.state.phase is Phase.POST_ROLL


def test_X6_mr_monopoly_skips_teammates_properties() -> None:
    t = speed_table(4, config=team(speed_die_from_round=8))
    seat = t.state.current
    board = t.state.config.board
    give(t.state, seat ^ 2, *board.purchasable)  # all the teammate's
    give(t.state, seat ^ 1, 11)
    force_speed(t.state, 1, 2, MR)
    events = t.do(Roll(seat))  # 0 -> 3, the teammate's: no rent
    assert of(events, MrMonopolyMoved) == [MrMonopolyMoved(seat, 11)]
    assert [(e.debtor, e.creditor) for e in of(events, PaymentDue)] == [(seat, seat ^ 1)]


@pytest.mark.parametrize("n", [1, 2, 3])
def test_X6_triple_moves_to_any_square_and_is_not_doubles(n: int) -> None:
    t = speed_table()
    seat = t.state.current
    force_speed(t.state, n, n, n)
    events = t.do(Roll(seat))
    assert events[0] == DiceRolled(seat, n, n, n)
    assert of(events, ChoiceOffered) == [ChoiceOffered(seat, "triple")]
    assert not of(events, Moved)
    assert t.state.doubles == 0  # not counted as doubles
    legal = engine.legal_commands(t.state, seat)
    assert sorted(c.square for c in legal if isinstance(c, ChooseSquare)) == list(range(40))
    with pytest.raises(RuleViolation) as err:
        t.do(ChooseBusMove(seat, 2 * n))
    assert err.value.rule == "X6"
    with pytest.raises(RuleViolation) as err:
        t.do(ChooseSquare(seat, 40))
    assert err.value.rule == "B1"
    events = t.do(ChooseSquare(seat, 39))
    assert events[:2] == [SquareChosen(seat, 39), Moved(seat, 0, 39)]
    assert of(events, PurchaseOffered)[0].square == 39
    t.do(BuyProperty(seat))
    assert t.state.phase is Phase.POST_ROLL  # no roll again
    with pytest.raises(RuleViolation):
        t.do(Roll(seat))
    t.do(EndTurn(seat))
    assert t.state.current != seat


def test_X6_triple_after_two_doubles_does_not_send_to_jail() -> None:
    t = speed_table()
    seat = t.state.current
    t.state.doubles = 2  # two doubles already this turn
    t.state.rolled = True
    t.state.roll_again = True
    force_speed(t.state, 3, 3, 3)
    events = t.do(Roll(seat))
    assert not [e for e in events if type(e).__name__ == "SentToJail"]
    assert of(events, ChoiceOffered) == [ChoiceOffered(seat, "triple")]


def test_X6_doubles_with_a_different_face_still_count() -> None:
    t = speed_table()
    seat = t.state.current
    force_speed(t.state, 3, 3, 1)
    t.do(Roll(seat))
    assert t.state.doubles == 1


def test_X6_a_pair_of_4s_with_mr_monopoly_is_doubles_not_a_triple() -> None:
    """Mr. Monopoly's code is 4, but the face is no number: 4-4 beside it moves 8, Mr. Monopoly
    follows, and the doubles give another roll."""
    t = speed_table()
    seat = t.state.current
    force_speed(t.state, 4, 4, MR)
    events = t.do(Roll(seat))
    assert not of(events, ChoiceOffered)
    assert of(events, Moved)[0] == Moved(seat, 0, 8)
    assert t.state.doubles == 1 and t.state.roll_again


def test_X6_a_pair_of_5s_with_the_bus_is_doubles() -> None:
    """The bus's code is 5: 5-5 beside it is a bus ride and doubles (another roll), not a triple."""
    t = speed_table()
    seat = t.state.current
    force_speed(t.state, 5, 5, BUS)
    events = t.do(Roll(seat))
    assert of(events, ChoiceOffered) == [ChoiceOffered(seat, "bus")]
    assert t.state.doubles == 1
    t.do(ChooseBusMove(seat, 5))
    if t.state.phase is Phase.BUY:
        t.do(BuyProperty(seat))
    assert t.state.phase is Phase.PRE_ROLL  # G3: the doubles roll again


# -- every mode: whole games, invariants, replay ------------------------------------------------------


MODES = [
    ("classic", 4, {}),
    ("speed", 3, {}),
    ("duel", 3, {}),
    ("team", 4, {}),
    ("custom", 2, {"build_mode": "free", "speed_die": True, "starting_cash": 8000, "mortgage_rounds": 2}),
]


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize(("mode", "players", "options"), MODES, ids=[m[0] for m in MODES])
def test_X1_X6_whole_games_keep_invariants_and_replay(mode: str, players: int, options: dict, seed: int) -> None:
    cfg = preset(mode, round_cap=60, **options)
    state, events = new_game(cfg, [f"p{i}" for i in range(players)], seed)
    bot = RandomBot(seed)
    engine.check_invariants(state, len(events))
    for _ in range(200_000):
        if state.finished:
            break
        seat = state.actor
        command = bot.choose(state, seat)
        was = (state.round, state.players[seat].in_jail)
        step = engine.apply(state, command)
        events.extend(step)
        engine.check_invariants(state, len(events))
        for e in step:
            if isinstance(e, DiceRolled) and isinstance(command, Roll):
                # X6: the speed die joins in the mode's round, never in jail
                start = cfg.speed_die_from_round
                if start is None or was[0] < start or was[1]:
                    assert e.speed == 0, (was, e)
                else:
                    assert e.speed in (1, 2, 3, MR, BUS), (was, e)
            if isinstance(e, PaymentDue) and e.reason == "rent":
                assert not teammates(state, e.debtor, e.creditor)  # X4
    assert state.finished
    ended = of(events, GameEnded)
    assert len(ended) == 1
    assert ended[0].reason in ("last_team" if cfg.teams else "last_player", "round_cap")
    assert all(p.place >= 1 for p in state.players)
    assert state_to_data(engine.replay(events)) == state_to_data(state)
    if cfg.deal_board:
        assert len(of(events, BoardDealt)) == 1
    if cfg.teams and ended[0].reason == "last_team":
        assert set(ended[0].places) == {1, 2}
        winners = [p.seat for p in state.players if p.place == 1]
        assert len({s % 2 for s in winners}) == 1 and len(winners) == 2
