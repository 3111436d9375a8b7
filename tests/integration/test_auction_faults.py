"""The auction service's writes when the connection to Postgres is lost while one runs (real Postgres,
the fault injected at the connection): the outcome is read back before anything else moves the
auction, and the bidder is answered as Postgres decided, not told "nothing changed" for a bid that
went in. Each test has a schema of its own."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from engine import (
    AuctionStarted,
    Bid,
    DeclineProperty,
    Phase,
    Roll,
    RuleViolation,
    Surrender,
    apply,
    legal_commands,
    new_game,
    preset,
)
from servicekit.errors import Unavailable
from services.auction import store
from services.auction.auctions import Auctions, wall_ms

from .helpers import own_schema

pytestmark = pytest.mark.integration

MIGRATIONS = Path(__file__).parents[2] / "services" / "auction" / "migrations"


class LosingPool:
    """The service's pool; while `lose` is set, the next `save` statement runs in Postgres and then its
    connection is reported lost (`after=True`), or is lost before it is sent (`after=False`); while
    `down` is set every acquire is refused (Postgres away)."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool
        self.lose: bool | None = None  # None: nothing lost; True: lost after Postgres ran it; False: before
        self.down = False
        self.down_after_loss = False  # Postgres goes away right after the lost statement

    def acquire(self) -> Any:
        if self.down:
            raise ConnectionRefusedError(111, "Connection refused")
        return _Acquire(self)


class _Acquire:
    def __init__(self, owner: LosingPool) -> None:
        self.owner = owner
        self.inner = owner.pool.acquire()

    async def __aenter__(self) -> Any:
        return _Conn(self.owner, await self.inner.__aenter__())

    async def __aexit__(self, *exc: object) -> None:
        await self.inner.__aexit__(*exc)


class _Conn:
    def __init__(self, owner: LosingPool, conn: asyncpg.Connection) -> None:
        self.owner, self.conn = owner, conn

    def __getattr__(self, name: str) -> Any:
        return getattr(self.conn, name)

    async def fetchval(self, query: str, *args: Any) -> Any:
        lose = self.owner.lose
        if lose is None or "UPDATE auctions" not in query:
            return await self.conn.fetchval(query, *args)
        self.owner.lose = None
        self.owner.down = self.owner.down_after_loss
        if lose:
            await self.conn.fetchval(query, *args)  # Postgres took it; the answer never comes back
        raise asyncpg.ConnectionDoesNotExistError("connection was closed in the middle of operation")


@pytest.fixture
async def pool(server_urls: tuple[str, str]) -> AsyncIterator[asyncpg.Pool]:
    async with own_schema(server_urls[1], "auction", MIGRATIONS) as pool:
        yield pool


def auction_started(seed: int = 1) -> AuctionStarted:
    """An engine game (auctions run by a service) played until a declined square goes to auction."""
    state, _ = new_game(preset("classic").with_changes(external=("auction",)), ["ann", "bob", "cid"], seed)
    for _ in range(200):
        seat = state.actor
        if state.phase is Phase.BUY:
            command: Any = DeclineProperty(seat)
        elif state.phase is Phase.PRE_ROLL:
            command = Roll(seat)
        else:
            command = next(c for c in legal_commands(state, seat) if not isinstance(c, Surrender))
        for event in apply(state, command):
            if isinstance(event, AuctionStarted):
                return event
    raise AssertionError("no auction in 200 commands")


async def opened(auctions: Auctions) -> tuple[str, AuctionStarted, int]:
    table_id = "t-" + uuid.uuid4().hex[:8]
    started = auction_started()
    assert await auctions.start(table_id, 10, started, wall_ms(), 1)
    a = auctions.open[table_id]
    return table_id, started, a.row.state.bidders[a.row.state.turn]


async def in_postgres(pool: asyncpg.Pool, table_id: str, auction_id: int) -> store.AuctionRow:
    async with pool.acquire() as conn:
        row = await store.get(conn, table_id, auction_id)
    assert row is not None
    return row


async def test_A1_a_bid_whose_answer_was_lost_after_postgres_took_it_is_answered_as_made(pool: asyncpg.Pool) -> None:
    losing = LosingPool(pool)
    auctions = Auctions(losing)  # type: ignore[arg-type]
    table_id, started, bidder = await opened(auctions)
    losing.lose = True
    view = await auctions.move(table_id, started.auction_id, Bid(bidder, started.start_price))
    assert (view.high_bid, view.high_bidder) == (started.start_price, bidder)  # the bid, not "nothing changed"
    row = await in_postgres(pool, table_id, started.auction_id)
    assert row.version == auctions.open[table_id].row.version == 1  # memory is what Postgres has
    async with pool.acquire() as conn:
        assert await conn.fetchval("SELECT count(*) FROM auction_moves WHERE table_id = $1", table_id) == 1
    await auctions.stop()


async def test_A1_a_bid_lost_before_postgres_got_it_changes_nothing_and_says_so(pool: asyncpg.Pool) -> None:
    losing = LosingPool(pool)
    auctions = Auctions(losing)  # type: ignore[arg-type]
    table_id, started, bidder = await opened(auctions)
    losing.lose = False
    with pytest.raises(Unavailable, match="nothing changed"):
        await auctions.move(table_id, started.auction_id, Bid(bidder, started.start_price))
    assert (await in_postgres(pool, table_id, started.auction_id)).version == 0
    assert auctions.open[table_id].row.version == 0
    view = await auctions.move(table_id, started.auction_id, Bid(bidder, started.start_price))  # asked again
    assert (view.high_bid, view.high_bidder) == (started.start_price, bidder)
    await auctions.stop()


async def test_A1_an_outcome_still_unknown_is_said_and_the_move_asked_again_is_answered_once(
    pool: asyncpg.Pool,
) -> None:
    """Postgres took the bid, then stayed away through every read-back: UNAVAILABLE says the outcome is
    not known. Once Postgres is back, the same bid asked again is decided on the row as Postgres has
    it: the bid stands, so it is answered as made and nothing is written twice; another amount from
    that bidder, out of turn now, is refused (A1)."""
    losing = LosingPool(pool)
    auctions = Auctions(losing)  # type: ignore[arg-type]
    table_id, started, bidder = await opened(auctions)
    losing.lose, losing.down_after_loss = True, True
    with pytest.raises(Unavailable, match="not known yet"):
        await auctions.move(table_id, started.auction_id, Bid(bidder, started.start_price))
    losing.down = False
    assert (await in_postgres(pool, table_id, started.auction_id)).version == 1
    again = await auctions.move(table_id, started.auction_id, Bid(bidder, started.start_price))
    assert (again.high_bid, again.high_bidder) == (started.start_price, bidder)
    assert auctions.open[table_id].row.version == 1  # memory took Postgres's row; nothing new written
    with pytest.raises(RuleViolation) as refused:
        await auctions.move(table_id, started.auction_id, Bid(bidder, started.start_price + 50))
    assert refused.value.rule == "A1"
    async with pool.acquire() as conn:
        assert await conn.fetchval("SELECT count(*) FROM auction_moves WHERE table_id = $1", table_id) == 1
    await auctions.stop()


async def until_in_postgres(pool: asyncpg.Pool, table_id: str, auction_id: int, check: Any) -> store.AuctionRow:
    for _ in range(200):
        row = await in_postgres(pool, table_id, auction_id)
        if check(row):
            return row
        await asyncio.sleep(0.05)
    raise AssertionError(f"auction {auction_id} of {table_id} never reached the state: {row}")


async def test_E2_a_bidder_whose_time_ran_out_while_postgres_was_away_gets_a_whole_window_once_it_is_back(
    pool: asyncpg.Pool,
) -> None:
    """No bid could be taken meanwhile, so the time-out would be the platform's fault: once Postgres is
    back the bidder's window starts again, and only that one's end times them out."""
    losing = LosingPool(pool)
    auctions = Auctions(losing)  # type: ignore[arg-type]
    table_id = "t-" + uuid.uuid4().hex[:8]
    started = auction_started()
    assert await auctions.start(table_id, 10, started, wall_ms(), 100)  # 20 game s at 100x: 200 ms a bidder
    bidder = auctions.open[table_id].row.state.bidder
    losing.down = True
    await asyncio.sleep(0.6)  # the bidder's deadline passes while every write is refused
    losing.down = False
    back = wall_ms()
    row = await until_in_postgres(pool, table_id, started.auction_id, lambda r: r.version >= 1)
    assert (row.moves, row.state.bidder) == (0, bidder)  # not timed out
    assert row.deadline_unix_ms >= back + 200
    row = await until_in_postgres(pool, table_id, started.auction_id, lambda r: r.moves >= 1)
    async with pool.acquire() as conn:
        kinds = await conn.fetch("SELECT seat, kind FROM auction_moves WHERE table_id = $1 ORDER BY n", table_id)
    assert [(r["seat"], r["kind"]) for r in kinds][:1] == [(bidder, "timeout")]  # the new window ran out
    await auctions.stop()


async def test_A1_an_auction_heard_late_gives_its_first_bidder_the_whole_window(pool: asyncpg.Pool) -> None:
    """The table's AuctionStarted reached the service a minute after it was committed (NATS away): the
    first bidder's time runs from the opening here, not from the event."""
    auctions = Auctions(pool)
    table_id = "t-" + uuid.uuid4().hex[:8]
    opening = wall_ms()
    assert await auctions.start(table_id, 10, auction_started(), opening - 60_000, 1)
    assert auctions.open[table_id].row.deadline_unix_ms >= opening + 20_000
    assert auctions.open[table_id].row.moves == 0
    await auctions.stop()
