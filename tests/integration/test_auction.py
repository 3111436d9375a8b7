"""The auction service end to end: tables delegating their auctions (external=["auction"]) on real NATS and
Postgres; bids, passes and time-outs through gRPC; the result settled into the table exactly once."""

from __future__ import annotations

import asyncio
import dataclasses
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

import asyncpg
import grpc
import pytest
from nats.js import JetStreamContext

from client import bot_service_token, platform_channel
from client.auction import AuctionClient
from client.platform import Platform
from engine import (
    BANK,
    Command,
    ConfirmBack,
    DeclineProperty,
    Pay,
    Phase,
    RequestPause,
    Roll,
    TableState,
    VotePause,
    apply,
    new_game,
    preset,
)
from monopoly.v1 import auction_pb2, common_pb2, table_pb2, table_pb2_grpc
from servicekit import auth, bus, signals
from servicekit.settings import token_secret
from servicekit.wire import command_to_proto, event_from_proto
from services.auction import store as auction_store
from services.auction.handlers import DURABLE as AUCTION_DURABLE

from .helpers import join_seats, rule_id, table_state

pytestmark = pytest.mark.integration

PLAYERS = ["ann", "bob", "cid"]
CONFIG = preset("classic").with_changes(external=("auction",))
WAIT_S = 30.0


@pytest.fixture(scope="module")
def services(platform: Platform) -> Platform:
    """The session's platform (one table service per NATS: they share their durable consumers)."""
    return platform


@pytest.fixture(scope="module")
async def table_stub(services: Platform) -> AsyncIterator[table_pb2_grpc.TableServiceStub]:
    async with platform_channel(services.table_target) as channel:
        yield table_pb2_grpc.TableServiceStub(channel)


@pytest.fixture(scope="module")
async def auctions(services: Platform) -> AsyncIterator[AuctionClient]:
    async with AuctionClient(services.target("auction")) as client:
        yield client


def declining_seed(start: int) -> int:
    """A seed whose first roll lands its roller on a square for sale (a replica of the table's engine)."""
    for seed in range(start, start + 200):
        state, _ = new_game(CONFIG, PLAYERS, seed)
        apply(state, Roll(state.current))
        if state.offer >= 0 and state.phase is Phase.BUY:
            return seed
    raise AssertionError("no seed found")


@dataclass
class Game:
    stub: table_pb2_grpc.TableServiceStub
    table_id: str
    tokens: dict[int, str] = field(default_factory=dict)

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

    async def until(self, predicate: Callable[[TableState], bool], timeout: float = WAIT_S) -> TableState:
        async def poll() -> TableState:
            while not predicate(state := await self.state()):
                await asyncio.sleep(0.05)
            return state

        return await asyncio.wait_for(poll(), timeout)


async def declined(stub: table_pb2_grpc.TableServiceStub, seed: int, scale: int) -> tuple[Game, int, int]:
    """A table whose first player declined the square they landed on: (game, decliner, square)."""
    reply = await stub.CreateTable(
        table_pb2.CreateTableRequest(
            mode="classic", players=PLAYERS, seed=declining_seed(seed), clock_scale=scale, external=["auction"]
        )
    )
    game = Game(stub, reply.table_id, await join_seats(stub, reply.table_id, len(PLAYERS)))
    state = await game.state()
    me = state.current
    await game.submit(Roll(me))
    state = await game.state()
    assert state.phase is Phase.BUY, state.phase
    square = state.offer
    answer = await game.submit(DeclineProperty(me))
    assert [e.type for e in answer.events][-1] == "AuctionStarted"
    return game, me, square


async def opened(auctions: AuctionClient, table_id: str) -> auction_pb2.AuctionView:
    """The table's auction once the auction service opened it (it reads the table's events)."""

    async def poll() -> auction_pb2.AuctionView:
        while (view := await auctions.current(table_id)) is None:
            await asyncio.sleep(0.02)
        return view

    return await asyncio.wait_for(poll(), WAIT_S)


async def settled(auctions: AuctionClient, table_id: str, auction_id: int) -> auction_pb2.AuctionView:
    async def poll() -> auction_pb2.AuctionView:
        while (view := await auctions.get(table_id, auction_id)).status == "open":
            await asyncio.sleep(0.05)
        return view

    return await asyncio.wait_for(poll(), WAIT_S)


async def auction_events(js: JetStreamContext, table_id: str) -> list[auction_pb2.AuctionEvent]:
    """Every AuctionEvent the service published for the table, in order."""
    sub = await js.subscribe(bus.auction_subject(table_id, "*"), ordered_consumer=True)
    out: list[auction_pb2.AuctionEvent] = []
    try:
        while True:
            try:
                msg = await sub.next_msg(timeout=0.5)
            except TimeoutError:
                return out
            out.append(auction_pb2.AuctionEvent.FromString(msg.data))
    finally:
        await sub.unsubscribe()


async def test_A1_A3_a_declined_square_is_auctioned_by_the_service_and_the_winner_owns_it_and_pays(
    table_stub: table_pb2_grpc.TableServiceStub, auctions: AuctionClient, js: JetStreamContext
) -> None:
    game, me, square = await declined(table_stub, 100, 1)
    view = await opened(auctions, game.table_id)
    assert view.square == square and view.reason == "declined" and view.status == "open"
    assert me not in view.bidders and view.high_bidder == BANK and view.moves == 0
    first, second = view.bidders
    assert view.bidder == first
    watched: list[auction_pb2.AuctionView] = []

    async def follow() -> None:
        async for item in auctions.watch(game.table_id, view.auction_id):
            watched.append(item)

    watcher = asyncio.create_task(follow())
    while not watched:
        await asyncio.sleep(0.01)
    view = await auctions.bid(game.table_id, first, view.min_bid, game.tokens[first])
    price = view.high_bid
    assert (view.high_bidder, view.bidder, view.moves) == (first, second, 1)
    view = await auctions.bid(game.table_id, second, view.min_bid, game.tokens[second])
    assert view.high_bidder == second
    view = await auctions.bid(game.table_id, first, view.min_bid + 50, game.tokens[first])
    price = view.high_bid
    view = await auctions.pass_(game.table_id, second, game.tokens[second])
    assert (view.status, view.winner, view.price, view.bidder) == ("settled", first, price, BANK)
    assert await auctions.current(game.table_id) is None
    await asyncio.wait_for(watcher, 10)  # the stream ends with the settlement
    assert [v.moves for v in watched] == [0, 1, 2, 3, 4] and watched[-1] == view

    # The table applies the result: the winner owns the square and owes the price (A3) ...
    state = await game.until(lambda s: s.auction is None)
    assert state.owner[square] == first
    assert state.phase is Phase.PAYMENT and state.payments[0].debtor == first
    assert state.payments[0].amount == price
    cash = state.players[first].cash
    await game.submit(Pay(first))
    state = await game.state()
    assert state.players[first].cash == cash - price
    assert [e.type for e in await auction_events(js, game.table_id)] == [
        "opened",
        "bid",
        "bid",
        "bid",
        "passed",
        "settled",
    ]


async def test_A1_nobody_bids_and_the_square_stays_unowned(
    table_stub: table_pb2_grpc.TableServiceStub, auctions: AuctionClient
) -> None:
    game, _, square = await declined(table_stub, 200, 1)
    view = await opened(auctions, game.table_id)
    for seat in view.bidders:
        view = await auctions.pass_(game.table_id, seat, game.tokens[seat], auction_id=view.auction_id)
    assert (view.status, view.winner, view.price) == ("settled", BANK, 0)
    state = await game.until(lambda s: s.auction is None)
    assert state.owner[square] == BANK
    assert state.phase in (Phase.POST_ROLL, Phase.PRE_ROLL) and not state.payments  # PRE_ROLL after doubles


async def test_A1_E1_a_bidder_who_lets_the_time_run_out_passes(
    table_stub: table_pb2_grpc.TableServiceStub, auctions: AuctionClient, js: JetStreamContext
) -> None:
    scale = 20  # 20 game seconds to bid: one real second
    game, _, square = await declined(table_stub, 300, scale)
    view = await opened(auctions, game.table_id)
    first, second = view.bidders
    view = await auctions.bid(game.table_id, first, view.min_bid, game.tokens[first])
    assert view.deadline_unix_ms > 0 and view.bidder == second
    result = await settled(auctions, game.table_id, view.auction_id)
    assert (result.status, result.winner, result.price, result.moves) == ("settled", first, view.high_bid, 2)
    kinds = [(e.type, e.seat) for e in await auction_events(js, game.table_id)]
    assert kinds == [("opened", BANK), ("bid", first), ("timed_out", second), ("settled", first)]
    state = await game.until(lambda s: s.auction is None)
    assert state.owner[square] == first


async def test_A1_bids_need_the_seats_own_valid_token_and_a_legal_amount(
    table_stub: table_pb2_grpc.TableServiceStub, auctions: AuctionClient
) -> None:
    game, me, _ = await declined(table_stub, 400, 1)
    view = await opened(auctions, game.table_id)
    bidder = view.bidder
    with pytest.raises(grpc.aio.AioRpcError) as exc:  # another seat's token
        await auctions.bid(game.table_id, bidder, view.min_bid, game.tokens[me])
    assert exc.value.code() == grpc.StatusCode.PERMISSION_DENIED
    other_table = auth.issue(token_secret(), "another-table", bidder, "bob")
    with pytest.raises(grpc.aio.AioRpcError) as exc:
        await auctions.bid(game.table_id, bidder, view.min_bid, other_table)
    assert exc.value.code() == grpc.StatusCode.PERMISSION_DENIED
    forged = auth.issue("not-the-platforms-secret", game.table_id, bidder, "mallory")
    for token in (forged, "", "garbage"):
        with pytest.raises(grpc.aio.AioRpcError) as exc:
            await auctions.pass_(game.table_id, bidder, token)
        assert exc.value.code() == grpc.StatusCode.UNAUTHENTICATED
    with pytest.raises(grpc.aio.AioRpcError) as exc:  # A1: under the minimum
        await auctions.bid(game.table_id, bidder, view.min_bid - 1, game.tokens[bidder])
    assert exc.value.code() == grpc.StatusCode.FAILED_PRECONDITION and rule_id(exc.value) == "A1"
    waiting = next(s for s in view.bidders if s != bidder)
    with pytest.raises(grpc.aio.AioRpcError) as exc:  # A1: not this seat's turn
        await auctions.bid(game.table_id, waiting, view.min_bid, game.tokens[waiting])
    assert exc.value.code() == grpc.StatusCode.FAILED_PRECONDITION and rule_id(exc.value) == "A1"
    limit = 15_000 + 10_000  # A3: far beyond what the bidder could raise
    with pytest.raises(grpc.aio.AioRpcError) as exc:
        await auctions.bid(game.table_id, bidder, limit, game.tokens[bidder])
    assert exc.value.code() == grpc.StatusCode.FAILED_PRECONDITION and rule_id(exc.value) == "A3"
    assert await auctions.get(game.table_id, view.auction_id) == view  # nothing changed
    with pytest.raises(grpc.aio.AioRpcError) as exc:
        await auctions.get(game.table_id, view.auction_id + 1)
    assert exc.value.code() == grpc.StatusCode.NOT_FOUND
    with pytest.raises(grpc.aio.AioRpcError) as exc:
        await auctions.stub.GetAuction(auction_pb2.GetAuctionRequest(table_id="no-such-table"))
    assert exc.value.code() == grpc.StatusCode.NOT_FOUND
    for seat in view.bidders:  # leave the table as it should be
        await auctions.pass_(game.table_id, seat, game.tokens[seat])


async def test_E5_a_paused_game_stops_the_bidders_clock(
    table_stub: table_pb2_grpc.TableServiceStub, auctions: AuctionClient
) -> None:
    scale = 10  # 20 game seconds to bid: two real seconds
    game, _, _ = await declined(table_stub, 700, scale)
    view = await opened(auctions, game.table_id)
    bidder = view.bidder
    await game.submit(RequestPause(bidder))
    for seat in range(len(PLAYERS)):
        if seat != bidder:
            await game.submit(VotePause(seat, True))
    await game.until(lambda s: s.paused)

    async def clock_stopped() -> auction_pb2.AuctionView:
        while (v := await auctions.get(game.table_id, view.auction_id)).deadline_unix_ms != 0:
            await asyncio.sleep(0.02)
        return v

    await asyncio.wait_for(clock_stopped(), WAIT_S)
    with pytest.raises(grpc.aio.AioRpcError) as exc:
        await auctions.bid(game.table_id, bidder, view.min_bid, game.tokens[bidder])
    assert exc.value.code() == grpc.StatusCode.FAILED_PRECONDITION and rule_id(exc.value) == "E5"
    await asyncio.sleep(2.2)  # longer than the whole bid window: nobody timed out while paused
    still = await auctions.get(game.table_id, view.auction_id)
    assert (still.status, still.bidder, still.moves) == ("open", bidder, 0)
    for seat in range(len(PLAYERS)):
        await game.submit(ConfirmBack(seat))
    await game.until(lambda s: not s.paused)

    async def clock_running() -> auction_pb2.AuctionView:
        while (v := await auctions.get(game.table_id, view.auction_id)).deadline_unix_ms == 0:
            await asyncio.sleep(0.02)
        return v

    running = await asyncio.wait_for(clock_running(), WAIT_S)
    assert running.bidder == bidder and running.status == "open"
    after = await auctions.bid(game.table_id, bidder, view.min_bid, game.tokens[bidder])
    assert after.high_bidder == bidder
    await auctions.pass_(game.table_id, after.bidder, game.tokens[after.bidder])


async def test_a_redelivered_auction_started_opens_nothing_twice(
    table_stub: table_pb2_grpc.TableServiceStub,
    auctions: AuctionClient,
    js: JetStreamContext,
    services: Platform,
    server_urls: tuple[str, str],
) -> None:
    game, _, _ = await declined(table_stub, 500, 1)
    view = await opened(auctions, game.table_id)
    view = await auctions.bid(game.table_id, view.bidder, view.min_bid, game.tokens[view.bidder])
    # The table's signal with AuctionStarted, published again under a new message id (JetStream keeps it).
    sub = await js.subscribe(signals.subject("auction", game.table_id), ordered_consumer=True)
    batch = None
    while batch is None:
        msg = await sub.next_msg(timeout=5)
        if any(e.type == "AuctionStarted" for e in common_pb2.EventBatch.FromString(msg.data).events):
            batch = msg.data
    await sub.unsubscribe()
    ack = await js.publish(signals.subject("auction", game.table_id), batch, headers={"Nats-Msg-Id": uuid.uuid4().hex})
    assert not ack.duplicate
    await consumed(js, ack.seq)
    again = await auctions.get(game.table_id, view.auction_id)
    assert again == view, (again, view)  # the same auction, its bid kept
    conn = await asyncpg.connect(server_urls[1])
    try:
        count = await conn.fetchval("SELECT count(*) FROM auction.auctions WHERE table_id = $1", game.table_id)
    finally:
        await conn.close()
    assert count == 1
    assert [e.type for e in await auction_events(js, game.table_id)] == ["opened", "bid"]
    await auctions.pass_(game.table_id, view.bidder, game.tokens[view.bidder])
    await settled(auctions, game.table_id, view.auction_id)


async def consumed(js: JetStreamContext, stream_seq: int) -> None:
    """Wait until the auction service's durable consumer has acked the table signals up to `stream_seq`."""

    async def poll() -> None:
        while True:
            info = await js.consumer_info(bus.TABLE_SIGNALS.name, AUCTION_DURABLE)
            if info.ack_floor.stream_seq >= stream_seq:
                return
            await asyncio.sleep(0.05)

    await asyncio.wait_for(poll(), WAIT_S)


async def test_an_auction_survives_a_sigkill_of_the_service_and_settles_exactly_once(
    table_stub: table_pb2_grpc.TableServiceStub, auctions: AuctionClient, js: JetStreamContext, services: Platform
) -> None:
    scale = 2  # 20 game seconds to bid: 10 real seconds, more than a restart takes on a loaded machine
    game, _, square = await declined(table_stub, 600, scale)
    view = await opened(auctions, game.table_id)
    first, _ = view.bidders
    view = await auctions.bid(game.table_id, first, view.min_bid + 100, game.tokens[first])
    deadline = view.deadline_unix_ms
    await services.processes["auction"].kill()
    await services.processes["auction"].start()
    again = await auctions.stub.GetAuction(
        auction_pb2.GetAuctionRequest(table_id=game.table_id), wait_for_ready=True, timeout=WAIT_S
    )
    assert again == view  # the state and the deadline survived
    assert again.deadline_unix_ms == deadline
    # The second bidder lets the time run out (the timer was re-armed): the first wins, once.
    result = await settled(auctions, game.table_id, view.auction_id)
    assert (result.winner, result.price) == (first, view.high_bid)
    state = await game.until(lambda s: s.auction is None)
    assert state.owner[square] == first and state.payments[0].amount == view.high_bid
    await asyncio.sleep(0.5)
    events = await auction_events(js, game.table_id)
    assert [e.type for e in events] == ["opened", "bid", "timed_out", "settled"]
    assert len({e.event_id for e in events}) == len(events)
    rows = await table_events(game, "AuctionSettled")
    assert len(rows) == 1


async def test_E2_a_bidder_whose_time_ran_out_while_no_auction_service_ran_gets_a_whole_window(
    table_stub: table_pb2_grpc.TableServiceStub, auctions: AuctionClient, js: JetStreamContext, services: Platform
) -> None:
    """Nobody could bid while the service was down: the platform's downtime, not the bidder's (E2), as
    for an outage of Postgres. The service is down longer than the whole bid window here."""
    scale = 5  # 20 game seconds to bid: four real seconds, for the bid after the restart on a loaded machine
    game, _, _ = await declined(table_stub, 700, scale)
    view = await opened(auctions, game.table_id)
    first, second = view.bidders
    view = await auctions.bid(game.table_id, first, view.min_bid, game.tokens[first])
    assert view.bidder == second
    await services.processes["auction"].stop()
    await asyncio.sleep(5.0)  # past the second bidder's deadline
    await services.processes["auction"].start()
    again = await auctions.stub.GetAuction(
        auction_pb2.GetAuctionRequest(table_id=game.table_id), wait_for_ready=True, timeout=WAIT_S
    )
    if again.deadline_unix_ms == view.deadline_unix_ms:  # the new window not written yet
        await asyncio.sleep(0.5)
        again = await auctions.current(game.table_id)
        assert again is not None
    assert again.status == "open" and again.bidder == second and again.deadline_unix_ms > view.deadline_unix_ms
    outbid = await auctions.bid(game.table_id, second, view.high_bid + 100, game.tokens[second])
    assert outbid.high_bidder == second  # the window was the bidder's own to use
    kinds = [e.type for e in await auction_events(js, game.table_id)]
    assert "timed_out" not in kinds, kinds


async def table_events(game: Game, kind: str) -> list[common_pb2.Envelope]:
    """The table's events of one type, from its WatchTable stream (from seq 1)."""
    out: list[common_pb2.Envelope] = []
    state = await game.state()
    stream = game.stub.WatchTable(
        table_pb2.WatchTableRequest(table_id=game.table_id, from_seq=1, seat_token=bot_service_token())
    )
    async for item in stream:
        events = list(item.batch.events) if item.HasField("batch") else [item.event]
        out.extend(e for e in events if e.type == kind)
        if events and events[-1].seq >= state.seq:
            break
    stream.cancel()
    assert all(event_from_proto(e.payload) for e in out)
    return out


async def test_a_move_written_against_an_old_version_writes_nothing(
    table_stub: table_pb2_grpc.TableServiceStub, auctions: AuctionClient, server_urls: tuple[str, str]
) -> None:
    """The auction row's version guards every move (one statement: state, move and outbox rows):
    a writer that read an older version writes none of them, and the current version still can."""
    game, _, _ = await declined(table_stub, 501, 1)
    view = await opened(auctions, game.table_id)
    conn = await asyncpg.connect(server_urls[1], server_settings={"search_path": "auction"})
    try:
        row = await auction_store.get(conn, game.table_id, view.auction_id)
        assert row is not None

        async def written() -> tuple[int, int]:
            moves = await conn.fetchval(
                "SELECT count(*) FROM auction_moves WHERE table_id = $1 AND auction_id = $2",
                game.table_id,
                view.auction_id,
            )
            versions = await conn.fetchval(
                "SELECT version FROM auctions WHERE table_id = $1 AND auction_id = $2", game.table_id, view.auction_id
            )
            return moves, versions

        before = await written()
        moved = dataclasses.replace(row, version=row.version + 1, moves=row.moves + 1)
        fact = ("monopoly.auction.test.bid", f"stale-{uuid.uuid4().hex}", b"x")
        assert not await auction_store.save(conn, moved, row.version - 1, (view.bidder, "bid", 10), [fact])
        assert await written() == before
        assert await conn.fetchval("SELECT count(*) FROM outbox WHERE msg_id = $1", fact[1]) == 0
    finally:
        await conn.close()
    after = await auctions.bid(game.table_id, view.bidder, view.min_bid, game.tokens[view.bidder])
    assert after.high_bid == view.min_bid  # the service's own write, at the current version, went in
