"""Hasbro tables through the platform: the printed rule set with its auctions, trades and building
run by the services (external=["auction", "trade", "casino"]), on real NATS and Postgres.

A2: an auction open to every player (the decliner too) from $10 in $1 steps, run by the auction
service and settled into the table. D4: a bankrupt player's property goes back to the bank and the
auction service auctions it at once. T6: a player whose turn it is not trades a Get Out of Jail
Free card through the trade service. P10: bots build outside their turn through the table service
and a building auction runs at the auction service, in a whole game played to its end. R4: players
queued for hasbro get such a table from matchmaking (what `make demo RULESET=hasbro` plays).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

import asyncpg
import grpc
import pytest
from nats.js import JetStreamContext

from client import BotTable, SubProtocolStubs, platform_channel
from client.auction import AuctionClient
from client.matchmaking import MatchmakingClient
from client.platform import Platform
from client.trade import accept, connect_trade, propose
from client.verify import check_table
from engine import (
    SUB_PROTOCOLS,
    AuctionStarted,
    BuildingBuilt,
    BuyProperty,
    Command,
    DeclineProperty,
    EndTurn,
    Event,
    Pay,
    Phase,
    Roll,
    RuleViolation,
    Surrender,
    TableState,
    apply,
    check_invariants,
    new_game,
    preset,
)
from engine.flow import bid_limits
from monopoly.v1 import auction_pb2, rating_pb2_grpc, table_pb2, table_pb2_grpc, trade_pb2_grpc
from servicekit.wire import command_to_proto

from .helpers import join_seats, judged, rule_id, table_state

pytestmark = pytest.mark.integration

PLAYERS = ["ann", "bob", "cid"]
#: The hasbro preset as the table service builds it for a table delegating every sub-protocol.
CONFIG = preset("hasbro").with_changes(external=SUB_PROTOCOLS)
WAIT_S = 30.0
#: A seed whose bots, at full speed, run a P10 building auction at the auction service (the game is
#: deterministic: dice from the seed, bots from the seed, no timer fires at clock scale 1). Should a
#: change to the bots or the rules move it, any seed whose game shows a "house" or "hotel" auction,
#: executed trades and builds out of turn does: found offline by playing the bots' loop on the pure
#: engine (G1's opening throws moved it from 873; 105 ends in 31 rounds, 148, 237 and 287 also qualify).
BUILDING_AUCTION_SEED = 105


@pytest.fixture(scope="module")
async def auctions(platform: Platform) -> AsyncIterator[AuctionClient]:
    async with AuctionClient(platform.target("auction")) as client:
        yield client


@pytest.fixture(scope="module")
async def trades(platform: Platform) -> AsyncIterator[trade_pb2_grpc.TradeServiceStub]:
    channel, stub = connect_trade(platform.target("trade"))
    try:
        yield stub
    finally:
        await channel.close()


# -- a hasbro table driven command by command -------------------------------------------------------------


def scripted(state: TableState) -> Command | None:
    """The moves of a plain player: roll, buy what one lands on, pay, end the turn (None: anything else)."""
    seat, phase = state.actor, state.phase
    if phase is Phase.PRE_ROLL:
        return Roll(seat)
    if phase is Phase.BUY:
        return BuyProperty(seat)
    if phase is Phase.PAYMENT:
        return Pay(seat)
    if phase is Phase.POST_ROLL:
        return EndTurn(seat)
    return None


def seed_reaching(goal: Callable[[TableState], bool], start: int, moves: int = 40) -> int:
    """A seed whose table reaches `goal` within `moves` scripted moves (found on a replica of the engine)."""
    for seed in range(start, start + 300):
        state, _ = new_game(CONFIG, PLAYERS, seed)
        for _ in range(moves):
            if goal(state):
                return seed
            command = scripted(state)
            if command is None:
                break
            try:
                apply(state, command)
            except RuleViolation:
                break
    raise AssertionError("no seed found")


@dataclass
class Game:
    stub: table_pb2_grpc.TableServiceStub
    table_id: str = ""
    tokens: dict[int, str] = field(default_factory=dict)

    @classmethod
    async def create(cls, stub: table_pb2_grpc.TableServiceStub, seed: int) -> Game:
        reply = await stub.CreateTable(
            table_pb2.CreateTableRequest(
                mode="hasbro", players=PLAYERS, seed=seed, clock_scale=1, external=list(SUB_PROTOCOLS)
            )
        )
        return cls(stub, reply.table_id, await join_seats(stub, reply.table_id, len(PLAYERS)))

    async def state(self) -> TableState:
        return await table_state(self.stub, self.table_id)

    async def submit(self, command: Command) -> table_pb2.SubmitCommandResponse:
        return await self.stub.SubmitCommand(
            table_pb2.SubmitCommandRequest(
                table_id=self.table_id,
                command_id=uuid.uuid4().hex,
                seat_token=self.tokens[command.seat],
                command=command_to_proto(command),
            ),
            timeout=10,
        )

    async def play_until(self, goal: Callable[[TableState], bool], moves: int = 40) -> TableState:
        """Scripted moves until `goal` holds (as on the replica that chose the seed)."""
        for _ in range(moves):
            state = await self.state()
            if goal(state):
                return state
            command = scripted(state)
            assert command is not None, state.phase
            await self.submit(command)
        raise AssertionError(f"not reached in {moves} moves")

    async def until(self, predicate: Callable[[TableState], bool]) -> TableState:
        async def poll() -> TableState:
            while not predicate(state := await self.state()):
                await asyncio.sleep(0.02)
            return state

        return await asyncio.wait_for(poll(), WAIT_S)


async def opened(auctions: AuctionClient, table_id: str) -> auction_pb2.AuctionView:
    async def poll() -> auction_pb2.AuctionView:
        while (view := await auctions.current(table_id)) is None:
            await asyncio.sleep(0.02)
        return view

    return await asyncio.wait_for(poll(), WAIT_S)


async def event_types(pool: asyncpg.Pool, table_id: str) -> list[str]:
    async with pool.acquire() as conn:
        rows = await conn.fetch("SELECT type FROM table_events WHERE table_id = $1 ORDER BY seq", table_id)
    return [r["type"] for r in rows]


# -- A2 ---------------------------------------------------------------------------------------------------


def can_buy(state: TableState) -> bool:
    return state.phase is Phase.BUY


async def test_A2_every_player_bids_from_10_in_1_steps_at_the_auction_service_and_the_table_settles(
    stub: table_pb2_grpc.TableServiceStub, auctions: AuctionClient
) -> None:
    game = await Game.create(stub, seed_reaching(can_buy, 1))
    state = await game.play_until(can_buy)
    me, square = state.current, state.offer
    answer = await game.submit(DeclineProperty(me))
    assert [e.type for e in answer.events][-1] == "AuctionStarted"
    view = await opened(auctions, game.table_id)
    # A2: every active player bids, the decliner included (last); the first bid at least $10
    assert (view.reason, view.square, view.status) == ("declined", square, "open")
    assert sorted(view.bidders) == [0, 1, 2] and view.bidders[-1] == me
    assert view.min_bid == 10
    first, second, _ = view.bidders
    view = await auctions.bid(game.table_id, first, 10, game.tokens[first])
    assert view.min_bid == 11  # A2: then at least $1 more
    with pytest.raises(grpc.aio.AioRpcError) as exc:
        await auctions.bid(game.table_id, second, 10, game.tokens[second])
    assert exc.value.code() == grpc.StatusCode.FAILED_PRECONDITION and rule_id(exc.value) == "A2"
    view = await auctions.bid(game.table_id, second, 11, game.tokens[second])
    view = await auctions.bid(game.table_id, me, 12, game.tokens[me])  # the decliner bids too
    view = await auctions.pass_(game.table_id, first, game.tokens[first])
    view = await auctions.pass_(game.table_id, second, game.tokens[second])
    assert (view.status, view.winner, view.price) == ("settled", me, 12)
    with pytest.raises(grpc.aio.AioRpcError) as exc:  # a bid after the end names A2 here too
        await auctions.bid(game.table_id, first, 13, game.tokens[first], auction_id=view.auction_id)
    assert exc.value.code() == grpc.StatusCode.FAILED_PRECONDITION and rule_id(exc.value) == "A2"
    # the table applies the service's result: the decliner owns the square and owes $12 (A3)
    state = await game.until(lambda s: s.auction is None)
    assert state.owner[square] == me
    assert state.payments[0].debtor == me and state.payments[0].amount == 12
    cash = state.players[me].cash
    await game.submit(Pay(me))
    assert (await game.state()).players[me].cash == cash - 12


async def test_A3_T6_a_trade_during_the_auction_moves_the_bid_limits_the_auction_service_holds(
    stub: table_pb2_grpc.TableServiceStub,
    auctions: AuctionClient,
    trades: trade_pb2_grpc.TradeServiceStub,
    pool: asyncpg.Pool,
) -> None:
    """Two bidders trade cash while the auction runs (T6): the table sends the new limits
    (AuctionLimitsChanged) and the auction service takes the richer one's bid it refused before."""
    game = await Game.create(stub, seed_reaching(can_buy, 1))
    state = await game.play_until(can_buy)
    await game.submit(DeclineProperty(state.current))
    view = await opened(auctions, game.table_id)
    state = await game.state()
    assert state.auction is not None
    before = dict(zip(view.bidders, bid_limits(state, view.square, state.auction.reason, view.bidders), strict=True))
    first, second, _ = view.bidders
    with pytest.raises(grpc.aio.AioRpcError) as exc:
        await auctions.bid(game.table_id, first, before[first] + 1, game.tokens[first])
    assert exc.value.code() == grpc.StatusCode.FAILED_PRECONDITION and rule_id(exc.value) == "A3"
    # the second bidder pays the first 500 (T6: neither is the player to act)
    offer = await propose(trades, game.table_id, second, game.tokens[second], first, give_cash=500)
    assert (await accept(trades, game.table_id, offer.trade_id, first, game.tokens[first])).status == "executed"
    assert "AuctionLimitsChanged" in await event_types(pool, game.table_id)

    async def bid_when_allowed() -> auction_pb2.AuctionView:
        while True:
            try:
                return await auctions.bid(game.table_id, first, before[first] + 1, game.tokens[first])
            except grpc.aio.AioRpcError as refused:
                assert rule_id(refused) == "A3", refused.details()
                await asyncio.sleep(0.05)

    view = await asyncio.wait_for(bid_when_allowed(), WAIT_S)
    assert (view.high_bidder, view.high_bid) == (first, before[first] + 1)
    assert view.min_bid > before[second] - 500  # the payer could raise 500 less than at the opening
    with pytest.raises(grpc.aio.AioRpcError) as exc:
        await auctions.bid(game.table_id, second, view.min_bid, game.tokens[second])
    assert exc.value.code() == grpc.StatusCode.FAILED_PRECONDITION and rule_id(exc.value) == "A3"


# -- D4 ---------------------------------------------------------------------------------------------------


def bought_and_rolled(state: TableState) -> bool:
    """The player to act owns a square bought this turn and has rolled (no doubles to roll again)."""
    return state.phase is Phase.POST_ROLL and any(owner == state.current for owner in state.owner)


async def test_D4_a_player_bankrupt_to_the_bank_has_their_property_auctioned_at_the_auction_service(
    stub: table_pb2_grpc.TableServiceStub, auctions: AuctionClient, pool: asyncpg.Pool
) -> None:
    game = await Game.create(stub, seed_reaching(bought_and_rolled, 1))
    state = await game.play_until(bought_and_rolled)
    me = state.current
    (square,) = [sq for sq, owner in enumerate(state.owner) if owner == me]
    answer = await game.submit(Surrender(me))  # nobody is owed: bankrupt to the bank
    types = [e.type for e in answer.events]
    assert "PlayerBankrupt" in types and types[-1] == "AuctionStarted"
    view = await opened(auctions, game.table_id)
    # D4: the property is back with the bank and auctioned at once, every active player bidding (A2)
    assert (view.reason, view.square) == ("bankrupt", square)
    assert sorted(view.bidders) == sorted(s for s in range(3) if s != me) and view.min_bid == 10
    first, second = view.bidders
    await auctions.bid(game.table_id, first, 10, game.tokens[first])
    await auctions.bid(game.table_id, second, 11, game.tokens[second])
    view = await auctions.pass_(game.table_id, first, game.tokens[first])
    assert (view.status, view.winner, view.price) == ("settled", second, 11)
    state = await game.until(lambda s: s.auction is None)
    assert state.owner[square] == second and state.mortgaged_round[square] < 0
    assert state.payments[0].debtor == second and state.payments[0].amount == 11
    async with pool.acquire() as conn:
        applied = await conn.fetchval(
            "SELECT count(*) FROM table_commands WHERE table_id = $1 AND command_id = $2",
            game.table_id,
            f"auction:{game.table_id}:{view.auction_id}",
        )
    assert applied == 1  # the service's result, applied once as SettleAuction


# -- T6 ---------------------------------------------------------------------------------------------------


def card_held_off_turn(state: TableState) -> bool:
    """A player other than the one to roll holds a Get Out of Jail Free card."""
    return state.phase is Phase.PRE_ROLL and any(
        p.jail_cards for seat, p in enumerate(state.players) if seat != state.current
    )


async def test_T6_a_player_whose_turn_it_is_not_trades_a_jail_card_through_the_trade_service(
    stub: table_pb2_grpc.TableServiceStub, trades: trade_pb2_grpc.TradeServiceStub, pool: asyncpg.Pool
) -> None:
    game = await Game.create(stub, seed_reaching(card_held_off_turn, 1))
    state = await game.play_until(card_held_off_turn)
    current = state.current
    holder = next(s for s, p in enumerate(state.players) if s != current and p.jail_cards)
    other = next(s for s in range(3) if s not in (current, holder))
    card = state.players[holder].jail_cards[0]
    cash = [p.cash for p in state.players]
    # T6: neither the proposer nor the counterparty is the player to act
    view = await propose(trades, game.table_id, holder, game.tokens[holder], other, take_cash=40, give_cards=[card])
    assert view.status == "open" and list(view.terms.give_cards) == [card]
    done = await accept(trades, game.table_id, view.trade_id, other, game.tokens[other])
    assert done.status == "executed"
    state = await game.state()
    assert state.current == current and state.players[other].jail_cards == [card]
    assert card not in state.players[holder].jail_cards
    assert state.players[holder].cash == cash[holder] + 40 and state.players[other].cash == cash[other] - 40
    assert (await event_types(pool, game.table_id))[-2:] == ["TradeExecuted", "JailCardsTraded"]
    # a card the proposer does not hold is refused by the engine's T2 at the trade service
    with pytest.raises(grpc.aio.AioRpcError) as exc:
        await propose(trades, game.table_id, holder, game.tokens[holder], current, give_cards=[card])
    assert exc.value.code() == grpc.StatusCode.FAILED_PRECONDITION and rule_id(exc.value) == "T2"


# -- a whole game: P10 building outside one's turn, a building auction --------------------------------


async def test_P10_A2_bots_play_a_hasbro_table_to_its_end_through_the_services(
    platform: Platform, stub: table_pb2_grpc.TableServiceStub, pool: asyncpg.Pool, js: JetStreamContext
) -> None:
    services = SubProtocolStubs.connect({n: platform.target(n) for n in SUB_PROTOCOLS})
    reasons: list[str] = []  # of the auctions the table opened
    off_turn_builds = 0

    def on_event(table: BotTable, event: Event) -> None:
        nonlocal off_turn_builds
        assert table.state is not None
        if isinstance(event, AuctionStarted):
            reasons.append(event.reason)
        elif isinstance(event, BuildingBuilt) and event.seat != table.state.current:
            off_turn_builds += 1

    game = BotTable(
        stub, mode="hasbro", seed=BUILDING_AUCTION_SEED, clock_scale=1, services=services, on_event=on_event
    )
    try:
        await game.create()
        state = await asyncio.wait_for(game.play(), 120)
    finally:
        await services.close()
    assert state.finished and state.end_reason == "last_player"
    check_invariants(state, state.seq)  # every player's cash and the bank's ledger add up
    agreement = await check_table(pool, js, stub, game.table_id)
    assert agreement.ok, agreement
    # P10: bots built outside their turn, through the table service
    assert game.any_time_moves["Build"] > 0 and off_turn_builds > 0
    async with pool.acquire() as conn:
        rows = await conn.fetch(
            "SELECT auction_id, state->>'reason' AS reason, closed_by FROM auction.auctions WHERE table_id = $1",
            game.table_id,
        )
        executed = await conn.fetchval(
            "SELECT count(*) FROM trade.trades WHERE table_id = $1 AND status = 'executed'", game.table_id
        )
        applied = await conn.fetchval(
            "SELECT count(*) FROM table_commands WHERE table_id = $1 AND command_id LIKE 'auction:%'", game.table_id
        )
    by_service = [r for r in rows if r["closed_by"] == "service"]
    # every auction the table opened ran at the service (A2), its result applied once
    assert sorted(r["reason"] for r in rows) == sorted(reasons) and applied == len(by_service) > 0
    assert {"house", "hotel"} & {r["reason"] for r in by_service}, (
        f"seed {BUILDING_AUCTION_SEED} no longer runs a building auction (P10): {sorted(reasons)}"
    )
    assert executed == game.event_counts["TradeExecuted"] > 0  # trades agreed at the trade service, executed once


# -- R4: the hasbro queue --------------------------------------------------------------------------------


async def test_R4_players_queued_for_hasbro_get_a_hasbro_table_delegating_its_sub_protocols(
    platform: Platform, stub: table_pb2_grpc.TableServiceStub
) -> None:
    tag = uuid.uuid4().hex[:6]
    async with MatchmakingClient(platform.target("matchmaking")) as mm:
        players = [await mm.register(f"{who}-{tag}") for who in ("ann", "ben", "cat", "dan")]
        seats = await mm.queue_and_wait(players, "hasbro", timeout=30)
    (table_id,) = {s.table_id for s in seats}
    assert seats[0].match.mode == "hasbro"
    game = Game(stub, table_id, {s.seat: s.seat_token for s in seats})
    state = await game.state()
    assert state.config.ruleset == "hasbro" and set(state.config.external) == set(SUB_PROTOCOLS)
    while not state.finished:  # a short game: the players give up in turn (D2), the last one wins
        await game.submit(Surrender(state.current))
        state = await game.state()
    assert state.winner >= 0 and len(state.eliminated) == 3
    async with platform_channel(platform.target("rating")) as channel:
        result = await judged(rating_pb2_grpc.RatingServiceStub(channel), table_id, WAIT_S)
    assert not result.rated and "hasbro rule set" in result.reason  # R1


# -- H3-H5: the Short and Time Limit games through the services ------------------------------------------


@pytest.mark.parametrize(
    ("mode", "settings", "scale", "bankruptcies", "reason"),
    [
        ("hasbro-short-6", {}, 1, 1, "short_game"),  # H4 6-page: the first bankruptcy ends it
        ("hasbro-short-8", {}, 1, 2, "short_game"),  # H3 8-page: the second does
        ("hasbro-time", {"time_limit_minutes": 1}, 600, 0, "time_limit"),  # H5: the agreed minute, 0.1 s here
    ],
)
async def test_H3_H4_H5_the_short_and_time_limit_games_end_as_their_revision_says_through_the_services(
    platform: Platform,
    stub: table_pb2_grpc.TableServiceStub,
    pool: asyncpg.Pool,
    js: JetStreamContext,
    mode: str,
    settings: dict[str, object],
    scale: int,
    bankruptcies: int,
    reason: str,
) -> None:
    services = SubProtocolStubs.connect({n: platform.target(n) for n in SUB_PROTOCOLS})
    game = BotTable(stub, mode=mode, settings=settings, seed=41, clock_scale=scale, services=services)
    try:
        await game.create()
        state = await asyncio.wait_for(game.play(), 120)
    finally:
        await services.close()
    assert state.finished and state.end_reason == reason
    assert game.event_counts["PlayerBankrupt"] == bankruptcies
    assert state.config.mode == mode and state.config.external == tuple(SUB_PROTOCOLS)
    if mode == "hasbro-time":
        assert state.config.time_limit_minutes == 1 and state.game_ms >= 60_000
    check_invariants(state, state.seq)
    agreement = await check_table(pool, js, stub, game.table_id)
    assert agreement.ok, agreement


async def test_H5_only_the_time_limit_game_takes_a_length_and_only_a_whole_number_of_minutes(
    stub: table_pb2_grpc.TableServiceStub,
) -> None:
    for mode, settings, needle in (
        ("hasbro", {"time_limit_minutes": 30}, "settings are for"),
        ("hasbro-time", {"starting_cash": 2000}, "unknown hasbro-time setting"),
        ("hasbro-time", {"time_limit_minutes": 0}, "H5"),
    ):
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await BotTable(stub, mode=mode, settings=settings).create()
        assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT, (mode, settings)
        assert needle in (refused.value.details() or ""), refused.value.details()
