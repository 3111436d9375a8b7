"""Random legal play (hypothesis) with the engine's global guarantees checked after every command.

After every command: the invariants hold; `decide` gave the same events as `apply` and left the state
alone; a refused command (RuleViolation) changed nothing; an incremental replay (`evolve` of every event)
equals the state; every event and command survives the JSON codec; the state survives the JSON codec.
At the end of every run a full `replay` equals the state. Plus: malformed commands raise ValueError.
"""

from __future__ import annotations

import dataclasses
import json
import random
from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import engine
from engine import (
    AcceptTrade,
    Bid,
    Build,
    BuyProperty,
    Command,
    DeclineBet,
    DeclineProperty,
    DeclineTrade,
    EndTurn,
    Event,
    PassBid,
    Pay,
    PayJailFine,
    Phase,
    PlaceBet,
    ProposeTrade,
    Roll,
    RuleViolation,
    SellBuilding,
    Surrender,
    TableConfig,
    TableState,
    Tick,
    UseJailCard,
    classic,
    codec,
)

PROGRESS = (
    Roll,
    EndTurn,
    BuyProperty,
    DeclineProperty,
    Pay,
    PayJailFine,
    UseJailCard,
    Bid,
    PassBid,
    PlaceBet,
    DeclineBet,
    AcceptTrade,
    DeclineTrade,
)
_STATE_FIELDS = tuple(f.name for f in dataclasses.fields(TableState) if f.name != "config")


def snapshot(state: TableState) -> dict[str, Any]:
    """Every field of the state as plain data (the frozen config is compared by identity)."""
    data = {name: codec.to_data(getattr(state, name)) for name in _STATE_FIELDS}
    data["config"] = id(state.config)
    return data


def json_round_trip(data: Any) -> Any:
    return json.loads(codec.dumps(data))


# -- the random player ---------------------------------------------------------------------------


def group_completing_trade(state: TableState, rnd: random.Random) -> ProposeTrade | None:
    """Buy the missing squares of a colour group from their one other owner at printed prices (so that
    random play reaches buildings)."""
    seat = state.actor
    board = state.config.board
    options = []
    for members in board.members[1:]:
        mine = [sq for sq in members if state.owner[sq] == seat]
        rest = [sq for sq in members if state.owner[sq] != seat]
        owners = {state.owner[sq] for sq in rest}
        if mine and rest and len(owners) == 1 and engine.BANK not in owners:
            options.append((owners.pop(), tuple(rest)))
    if not options:
        return None
    other, squares = rnd.choice(options)
    price = sum(board.squares[sq].price for sq in squares)
    return ProposeTrade(seat, other, give_cash=min(price, state.players[seat].cash), take_squares=squares)


def random_trade(state: TableState, rnd: random.Random) -> ProposeTrade:
    seat = state.actor
    n = len(state.players)
    if rnd.random() < 0.5:
        completing = group_completing_trade(state, rnd)
        if completing is not None:
            return completing
    others = [s for s in range(n) if s != seat]
    counterparty = rnd.choice(others) if rnd.random() > 0.05 else rnd.randrange(-1, n + 1)
    purchasable = state.config.board.purchasable

    def pick(owner: int) -> tuple[int, ...]:
        owned = [sq for sq in purchasable if state.owner[sq] == owner]
        if rnd.random() < 0.05:
            owned.append(rnd.randrange(0, 40))
        return tuple(rnd.sample(owned, k=rnd.randint(0, min(2, len(owned)))))

    def cash(owner: int) -> int:
        have = state.players[owner].cash if 0 <= owner < n else 0
        return rnd.choice([0, 0, 100, 1000, rnd.randint(0, max(have, 0)), have + 1])

    return ProposeTrade(seat, counterparty, cash(seat), pick(seat), cash(counterparty), pick(counterparty))


def random_junk(state: TableState, rnd: random.Random) -> Command:
    """A command of any type with random (mostly wrong) arguments, built through the codec."""
    name = rnd.choice(sorted(engine.COMMAND_TYPES))
    cls = engine.COMMAND_TYPES[name]
    hints = codec.field_types(cls)
    data: dict[str, Any] = {"type": name}
    for f in dataclasses.fields(cls):
        tp = hints[f.name]
        if f.name == "seat":
            data[f.name] = rnd.choice([state.actor, state.actor, state.current, rnd.randrange(-1, 7)])
        elif tp is bool:
            data[f.name] = rnd.random() < 0.5
        elif tp is int:
            data[f.name] = rnd.choice([rnd.randrange(-2, 42), rnd.randrange(0, 20000), state.next_trade_id])
        elif tp is str:
            data[f.name] = f"junk-{rnd.randrange(100)}"
        else:
            data[f.name] = [rnd.randrange(0, 42) for _ in range(rnd.randint(0, 4))]
    command = codec.command_from_data(data)
    assert codec.command_to_data(command) == data
    return command


def choose(state: TableState, rnd: random.Random, surrender_rate: float) -> Command:
    seat = state.actor
    legal = engine.legal_commands(state, seat)
    assert legal, f"nothing is legal for the actor {seat} in phase {state.phase}"
    phase = state.phase
    r = rnd.random()
    if r < 0.03:
        return random_junk(state, rnd)
    if r < 0.12 and phase in (Phase.PRE_ROLL, Phase.BUY, Phase.PAYMENT):
        return random_trade(state, rnd)
    if phase is Phase.AUCTION and r < 0.25:
        assert state.auction is not None
        return Bid(seat, state.auction.min_bid + rnd.choice([100, 500, 1000, 3000, 10**6]))
    surrender = [c for c in legal if isinstance(c, Surrender)]
    rest = [c for c in legal if not isinstance(c, Surrender)]
    if surrender and (not rest or rnd.random() < surrender_rate):
        return surrender[0]
    if phase is Phase.BUY and rnd.random() < 0.8 and BuyProperty(seat) in rest:
        return BuyProperty(seat)
    builds = [c for c in rest if isinstance(c, Build)]
    if builds and rnd.random() < 0.5:
        return rnd.choice(builds)
    sells = [c for c in rest if isinstance(c, SellBuilding)]
    if sells and phase is Phase.PAYMENT and Pay(seat) not in rest and rnd.random() < 0.7:
        return rnd.choice(sells)
    if phase is Phase.TRADE and rnd.random() < 0.5:
        return next(c for c in rest if isinstance(c, AcceptTrade))
    progress = [c for c in rest if isinstance(c, PROGRESS)]
    if progress and rnd.random() < 0.85:
        return rnd.choice(progress)
    return rnd.choice(rest)


# -- the checked run -------------------------------------------------------------------------------


def check_event_round_trip(event: Event) -> None:
    data = codec.event_to_data(event)
    assert codec.event_from_data(json_round_trip(data)) == event, data


def check_command_round_trip(command: Command) -> None:
    data = codec.command_to_data(command)
    back = codec.command_from_data(json_round_trip(data))
    assert back == command and type(back) is type(command), data


def check_state_round_trip(state: TableState) -> None:
    data = codec.state_to_data(state)
    restored = codec.state_from_data(json_round_trip(data))
    assert codec.state_to_data(restored) == data
    assert restored == state


def run_game(
    config: TableConfig,
    players: int,
    seed: int,
    rnd: random.Random,
    steps: int,
    surrender_rate: float = 0.003,
    state_round_trip_every: int = 1,
) -> tuple[TableState, list[Event], Counter[str], list[Command]]:
    """Play `steps` random commands (legal ones mostly), checking everything; return the state, the events,
    counts of what happened and the accepted commands."""
    names = [f"p{i}" for i in range(players)]
    state, events = engine.new_game(config, names, seed)
    seen: Counter[str] = Counter(type(e).__name__ for e in events)
    for event in events:
        check_event_round_trip(event)
    shadow = engine.replay(events)
    assert snapshot(shadow) == snapshot(state)
    engine.check_invariants(state, len(events))
    accepted: list[Command] = []
    for step in range(steps):
        if state.finished:
            break
        command = choose(state, rnd, surrender_rate)
        check_command_round_trip(command)
        listed = command in engine.legal_commands(state, command.seat)
        before = snapshot(state)
        try:
            decided = engine.decide(state, command)
        except RuleViolation as refused:
            assert not listed, f"legal_commands listed {command} but it was refused: {refused}"
            assert snapshot(state) == before, f"decide changed the state on a refused {command}"
            with pytest.raises(RuleViolation) as again:
                engine.apply(state, command)
            assert again.value.rule == refused.rule
            assert snapshot(state) == before, f"apply changed the state on a refused {command}"
            seen["refused:" + refused.rule] += 1
            continue
        assert snapshot(state) == before, f"decide changed the state: {command}"
        new = engine.apply(state, command)
        accepted.append(command)
        assert new == decided, command
        assert new or isinstance(command, Tick), f"{command} was accepted but produced no event"
        events.extend(new)
        engine.check_invariants(state, len(events))
        for event in new:
            check_event_round_trip(event)
            engine.evolve(shadow, event)
            seen[type(event).__name__] += 1
        assert snapshot(shadow) == snapshot(state), f"incremental replay differs after {command}"
        if step % state_round_trip_every == 0:
            check_state_round_trip(state)
    seen["steps"] += step + 1
    check_state_round_trip(state)
    assert codec.state_to_data(engine.replay(events)) == codec.state_to_data(state)
    if state.finished:
        assert engine.legal_commands(state, 0) == []
        places = sorted(p.place for p in state.players)
        if state.end_reason == "last_player":
            assert places == list(range(1, players + 1))
        assert state.players[state.winner].place == 1
    return state, events, seen, accepted


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
@given(
    seed=st.integers(min_value=0, max_value=2**63),
    players=st.integers(min_value=2, max_value=5),
    choices=st.integers(min_value=0, max_value=2**32),
    starting_cash=st.sampled_from([15000, 15000, 5000, 2500]),
    round_cap=st.sampled_from([None, None, 3, 12]),
)
def test_random_legal_play_keeps_every_guarantee(
    seed: int, players: int, choices: int, starting_cash: int, round_cap: int | None
) -> None:
    config = classic(starting_cash=starting_cash, round_cap=round_cap)
    run_game(config, players, seed, random.Random(choices), steps=150)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
@given(seed=st.integers(min_value=0, max_value=2**63), choices=st.integers(min_value=0, max_value=2**32))
def test_random_legal_play_long_classic_games(seed: int, choices: int) -> None:
    run_game(classic(), 4, seed, random.Random(choices), steps=500, surrender_rate=0.0005, state_round_trip_every=7)


def test_random_play_reaches_every_part_of_the_game() -> None:
    """The fuzzer is only worth something if it gets everywhere: a fixed set of runs must see every kind
    of event (bankruptcies, casino bets, trades, auctions, mortgages, jail, game ends)."""
    seen: Counter[str] = Counter()
    finished = 0
    for seed in range(16):
        config = classic(starting_cash=(15000, 4000, 2500)[seed % 3], round_cap=(None, 15)[seed % 2])
        state, _, counts, _ = run_game(
            config, 2 + seed % 4, seed, random.Random(seed), steps=400, state_round_trip_every=25
        )
        seen += counts
        finished += state.finished
    expected = {
        "DiceRolled",
        "Moved",
        "BankPaid",
        "PurchaseOffered",
        "PropertyBought",
        "PurchaseDeclined",
        "PaymentDue",
        "PaymentMade",
        "CardDrawn",
        "SentToJail",
        "LeftJail",
        "BuildingBuilt",
        "BuildingSold",
        "PropertyMortgaged",
        "MortgageLifted",
        "AuctionStarted",
        "BidPlaced",
        "BidPassed",
        "AuctionSettled",
        "TradeProposed",
        "TradeExecuted",
        "TradeDeclined",
        "CasinoOpened",
        "BetPlaced",
        "BetSettled",
        "BetDeclined",
        "PlayerBankrupt",
        "TurnEnded",
        "GameEnded",
    }
    assert expected <= set(seen), sorted(expected - set(seen))
    assert finished >= 4
    assert any(k.startswith("refused:") for k in seen)


@pytest.mark.parametrize("seed", [99, 2024])
def test_G10_same_seed_and_commands_give_the_same_game_event_for_event(seed: int) -> None:
    state, events, _, commands = run_game(classic(), 3, seed, random.Random(seed), steps=300, state_round_trip_every=50)
    again, events_again = engine.new_game(classic(), ["p0", "p1", "p2"], seed)
    for command in commands:
        events_again += engine.apply(again, command)
    assert events_again == events
    assert codec.state_to_data(again) == codec.state_to_data(state)
    # the events alone rebuild the state (no re-rolling)
    assert codec.state_to_data(engine.replay(events)) == codec.state_to_data(state)


# -- malformed commands ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "data",
    [
        None,
        [],
        "Roll",
        5,
        {},
        {"seat": 0},
        {"type": None, "seat": 0},
        {"type": 5, "seat": 0},
        {"type": "roll", "seat": 0},
        {"type": "Nope", "seat": 0},
        {"type": "TurnStarted", "seat": 0, "round": 1},
        {"type": "Command", "seat": 0},
        {"type": "Roll"},
        {"type": "Roll", "seat": 0, "extra": 1},
        {"type": "Roll", "seat": 0, "square": 3},
        {"type": "Roll", "seat": "0"},
        {"type": "Roll", "seat": True},
        {"type": "Roll", "seat": None},
        {"type": "Roll", "seat": 1.0},
        {"type": "Roll", "seat": [0]},
        {"type": "Roll", "seat": {"seat": 0}},
        {"type": "Leave", "seat": "0"},
        {"type": "Leave"},
        {"type": "Build", "seat": 0},
        {"type": "Build", "seat": 0, "square": "5"},
        {"type": "Mortgage", "square": 5},
        {"type": "Bid", "seat": 0},
        {"type": "Bid", "seat": 0, "amount": "1000"},
        {"type": "Bid", "seat": 0, "amount": 1000.0},
        {"type": "PlaceBet", "seat": 0},
        {"type": "PlaceBet", "seat": 0, "numbers": 5},
        {"type": "PlaceBet", "seat": 0, "numbers": None},
        {"type": "PlaceBet", "seat": 0, "numbers": "12"},
        {"type": "PlaceBet", "seat": 0, "numbers": [1, "2"]},
        {"type": "PlaceBet", "seat": 0, "numbers": [True]},
        {"type": "PlaceBet", "seat": 0, "numbers": [[1]]},
        {"type": "ProposeTrade", "seat": 0},
        {"type": "ProposeTrade", "seat": 0, "counterparty": 1, "give_squares": [[1]]},
        {"type": "ProposeTrade", "seat": 0, "counterparty": 1, "give_cash": "100"},
        {"type": "ProposeTrade", "seat": 0, "counterparty": 1, "take_squares": 3},
        {"type": "AcceptTrade", "seat": 0},
        {"type": "AcceptTrade", "seat": 0, "trade_id": None},
        {"type": "DeclineTrade", "seat": 0, "trade_id": 1, "why": "no"},
    ],
)
def test_malformed_commands_raise_value_error(data: Any) -> None:
    with pytest.raises(ValueError):
        codec.command_from_data(data)


def _filled(cls: type, **values: object) -> Any:
    """A command of `cls` with its required fields 0, its defaults, and `values`."""
    fields = {f.name: 0 for f in dataclasses.fields(cls) if f.default is dataclasses.MISSING}
    return cls(**{**fields, **values})


PLAYER_COMMANDS = sorted(
    (c for c in engine.COMMAND_TYPES.values() if c not in engine.SYSTEM_COMMANDS and c is not Tick),
    key=lambda c: c.__name__,
)


@pytest.mark.parametrize("seat", ["0", 0.0, None, True, [0]])
@pytest.mark.parametrize("cls", PLAYER_COMMANDS, ids=lambda c: c.__name__)
def test_G1_a_player_command_whose_seat_is_not_a_seat_number_is_refused_by_apply_and_check(
    cls: type, seat: object
) -> None:
    """In the pure and the compiled build alike (`make test-native`): a compiled rule reading the seat as
    the int it is declared would raise TypeError instead."""
    state, _ = engine.new_game(classic(), ["p0", "p1", "p2"], 1)
    for refuse in (engine.apply, engine.check):
        with pytest.raises(RuleViolation) as info:
            refuse(state, _filled(cls, seat=seat))
        assert info.value.rule == "G1"


@pytest.mark.parametrize("square", ["5", 5.0, None, -1, 40])
@pytest.mark.parametrize("cls", [engine.Build, SellBuilding, engine.Mortgage, engine.LiftMortgage])
def test_B1_a_square_that_is_not_on_the_board_is_refused(cls: type, square: object) -> None:
    state, _ = engine.new_game(classic(), ["p0", "p1", "p2"], 1)
    with pytest.raises(RuleViolation) as info:
        engine.apply(state, _filled(cls, seat=state.current, square=square))
    assert info.value.rule == "B1"


def test_T2_a_trade_id_that_is_not_a_number_is_refused_and_squares_may_come_as_a_list() -> None:
    state, _ = engine.new_game(classic(), ["p0", "p1", "p2"], 1)
    me = state.current
    other = next(s for s in state.order if s != me)
    state.owner[1] = me
    engine.apply(state, ProposeTrade(me, other, give_squares=[1], take_cash=600))  # type: ignore[arg-type]
    assert state.trade is not None and state.trade.give_squares == (1,)
    for bad in ("1", None, 1.0, True):
        for cls in (AcceptTrade, DeclineTrade):
            with pytest.raises(RuleViolation) as info:
                engine.apply(state, cls(other, bad))
            assert info.value.rule == "T2"


@pytest.mark.parametrize("data", [{"type": [], "seat": 0}, {"type": {}, "seat": 0}, {"type": ["Roll"], "seat": 0}])
def test_malformed_command_with_an_unhashable_type_tag_raises_value_error(data: Any) -> None:
    with pytest.raises(ValueError):
        codec.command_from_data(data)


@pytest.mark.parametrize("make", [lambda seat: Roll(bool(seat)), lambda seat: Surrender(bool(seat))])
def test_commands_accepted_by_the_engine_give_events_the_codec_reads_back(make: Any) -> None:
    """A bool seat (True == 1 in Python) must be refused like the codec refuses it; if the engine accepts
    it, the recorded events carry seat=True and cannot be read back by `event_from_data`."""
    state, _ = engine.new_game(classic(), ["p0", "p1", "p2"], 1)
    assert state.current == 1
    command = make(state.current)
    try:
        events = engine.apply(state, command)
    except RuleViolation:
        return
    for event in events:
        check_event_round_trip(event)


def test_well_formed_commands_parse_with_defaults() -> None:
    assert codec.command_from_data({"type": "Roll", "seat": 2}) == Roll(2)
    assert codec.command_from_data({"type": "PlaceBet", "seat": 1, "numbers": [3, 1]}) == PlaceBet(1, (3, 1))
    assert codec.command_from_data({"type": "ProposeTrade", "seat": 0, "counterparty": 1, "take_cash": 5}) == (
        ProposeTrade(0, 1, take_cash=5)
    )
    for name, cls in engine.COMMAND_TYPES.items():
        assert cls.__name__ == name
