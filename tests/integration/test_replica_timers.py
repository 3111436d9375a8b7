"""Two instances of the auction (and of the casino) service on one Postgres schema: each auction's
moves are serialised by the row's version, and a timer both instances hold fires once.

The instances are the services' own state objects (`Auctions`, `Casino`), each on a pool of its own,
in a database of this module's own (no running service reads it), so what the rows say is what the
two instances did.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from urllib.parse import urlsplit

import asyncpg
import pytest

from engine import Bid, PassBid
from engine.auction import AuctionStarted
from servicekit import db, idempotency
from services.auction import store as auction_store
from services.auction.auctions import Auctions, new_row, wall_ms
from services.casino.bets import Casino

pytestmark = pytest.mark.integration

SERVICES = Path(__file__).resolve().parents[2] / "services"
WAIT_S = 30.0


@pytest.fixture
async def database(server_urls: tuple[str, str]) -> AsyncIterator[str]:
    url = server_urls[1]
    name = f"replicas_{secrets.token_hex(4)}"
    conn = await asyncpg.connect(url)
    await conn.execute(f"CREATE DATABASE {name}")
    await conn.close()
    yield urlsplit(url)._replace(path=f"/{name}").geturl()
    conn = await asyncpg.connect(url)
    try:
        await conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    finally:
        await conn.close()


async def pools(url: str, schema: str) -> tuple[asyncpg.Pool, asyncpg.Pool]:
    """Two pools in the service's schema, migrated as the service migrates it: one per instance."""
    first = await db.create_pool(url, min_size=1, max_size=4, schema=schema)
    await db.migrate(first, "servicekit", idempotency.MIGRATIONS)
    await db.migrate(first, schema, SERVICES / schema / "migrations")
    second = await db.create_pool(url, min_size=1, max_size=4, schema=schema)
    return first, second


async def until(check: Callable[[], Awaitable[bool]], what: str, timeout: float = WAIT_S) -> None:
    deadline = time.monotonic() + timeout
    while not await check():
        assert time.monotonic() < deadline, f"not within {timeout:.0f} s: {what}"
        await asyncio.sleep(0.1)


def started(bid_ms: int) -> AuctionStarted:
    """Three bidders (seats 0, 1, 2) of square 6 from $100 in $10 steps, `bid_ms` each to bid (A1)."""
    return AuctionStarted(1, 6, "declined", (0, 1, 2), 100, 10, -1, (5000, 5000, 5000), bid_ms)


async def test_A1_moves_at_either_instance_are_serialised_and_each_time_out_fires_once(database: str) -> None:
    pool_a, pool_b = await pools(database, "auction")
    a, b = Auctions(pool_a), Auctions(pool_b)
    table_id = f"rep{secrets.token_hex(3)}"
    try:
        assert await a.start(table_id, 1, started(1500), wall_ms(), 1)
        assert await b.sweep() == 1  # the other instance adopts it (and arms its timer)
        await a.move(table_id, 1, Bid(0, 100))
        # b's copy still says seat 0 is to bid: the move is decided again on the row as a left it
        view = await b.move(table_id, 1, Bid(1, 110))
        assert (view.high_bidder, view.high_bid) == (1, 110)

        async def settled() -> bool:
            async with pool_a.acquire() as conn:
                row = await auction_store.get(conn, table_id, 1)
            return row is not None and row.status == "settled"

        # seats 2 and then 0 let their time run out at both instances, which both hold a timer
        await until(settled, "the auction settled by time-outs")
        await asyncio.sleep(2.0)  # any second firing would have written by now
        async with pool_a.acquire() as conn:
            moves = await auction_store.moves(conn, table_id, 1)
            row = await auction_store.get(conn, table_id, 1)
            outbox = await conn.fetch("SELECT subject, msg_id FROM outbox ORDER BY id")
        assert [(m["seat"], m["kind"], m["amount"]) for m in moves] == [
            (0, "bid", 100),
            (1, "bid", 110),
            (2, "timeout", 0),
            (0, "timeout", 0),
        ]
        assert row is not None and (row.winner, row.price) == (1, 110)
        kinds = [r["subject"].rsplit(".", 1)[-1] for r in outbox]
        assert kinds == ["opened", "bid", "bid", "timed_out", "timed_out", "settled"]  # one result, published once
        assert len({r["msg_id"] for r in outbox}) == len(outbox)
        await until(lambda: _gone(a, b, table_id), "both instances let the settled auction go")
    finally:
        await a.stop()
        await b.stop()
        await pool_a.close()
        await pool_b.close()


async def _gone(a: Auctions, b: Auctions, table_id: str) -> bool:
    return table_id not in a.open and table_id not in b.open


async def test_A1_an_instance_that_starts_takes_over_an_overdue_auction_and_times_it_out_once(database: str) -> None:
    """An auction opened by an instance that died before its timer fired: the others take it over. The
    bidder, whose time ran out while no auction service ran, first gets a whole bid window (E2: 3 s here),
    then is timed out once."""
    pool_a, pool_b = await pools(database, "auction")
    table_id = f"rep{secrets.token_hex(3)}"
    row = new_row(table_id, 1, started(3_000), wall_ms() - 13_000, 1)  # its deadline passed 10 s ago
    async with pool_a.acquire() as conn:
        assert await auction_store.open_auction(conn, row, [])
    a, b = Auctions(pool_a), Auctions(pool_b)
    try:
        assert await a.recover() == 1
        assert await b.recover() == 1

        async def first_timed_out() -> bool:
            async with pool_a.acquire() as conn:
                return bool(await auction_store.moves(conn, table_id, 1))

        await until(first_timed_out, "the overdue bidder timed out")
        async with pool_a.acquire() as conn:
            moves = await auction_store.moves(conn, table_id, 1)
        assert [(m["seat"], m["kind"]) for m in moves][:1] == [(0, "timeout")]
        await a.move(table_id, 1, PassBid(1))  # the next bidder answers at once: seat 0's time-out came once
        async with pool_a.acquire() as conn:
            moves = await auction_store.moves(conn, table_id, 1)
        assert [(m["seat"], m["kind"]) for m in moves][:2] == [(0, "timeout"), (1, "pass")]
    finally:
        await a.stop()
        await b.stop()
        await pool_a.close()
        await pool_b.close()


async def test_K1_E1_a_bet_both_instances_time_is_declined_once(database: str) -> None:
    pool_a, pool_b = await pools(database, "casino")
    a, b = Casino(pool_a), Casino(pool_b)
    table_id = f"rep{secrets.token_hex(3)}"
    try:
        assert await a.open(table_id, 5, 1, 2000, int(time.time() * 1000) + 1500)
        assert await b.sweep() == 1  # the other instance times it too
        assert await b.sweep() == 0  # once

        async def declined() -> bool:
            bet = await a.get(table_id, f"{table_id}:5")
            return bet.status == "declined"

        await until(declined, "the bet declined at its deadline")
        await asyncio.sleep(1.5)  # a second firing would have written by now
        bet = await b.get(table_id, f"{table_id}:5")
        assert (bet.status, bet.reason) == ("declined", "timeout")
        async with pool_a.acquire() as conn:
            facts = await conn.fetch("SELECT msg_id FROM outbox ORDER BY id")
        assert [r["msg_id"] for r in facts] == [f"{table_id}:5:open", f"{table_id}:5:declined"]
    finally:
        a.stop()
        b.stop()
        await pool_a.close()
        await pool_b.close()
