"""The casino service's bet timer through a Postgres outage (real Postgres, the outage injected at the
service's pool): the bettor, who could place no bet meanwhile, is not timed out for it. Each test has a
schema of its own."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from engine.casino import CasinoOpened
from servicekit.wire import envelope
from services.casino import store
from services.casino.bets import Casino, wall_ms
from services.casino.handlers import handle_envelope

from .helpers import own_schema

pytestmark = pytest.mark.integration

MIGRATIONS = Path(__file__).parents[2] / "services" / "casino" / "migrations"


class RefusingPool:
    """The service's pool; while `down` is set every acquire is refused (Postgres away)."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool
        self.down = False

    def acquire(self) -> Any:
        if self.down:
            raise ConnectionRefusedError(111, "Connection refused")
        return self.pool.acquire()


@pytest.fixture
async def pool(server_urls: tuple[str, str]) -> AsyncIterator[asyncpg.Pool]:
    async with own_schema(server_urls[1], "casino", MIGRATIONS, kit=True) as pool:
        yield pool


async def bet_row(pool: asyncpg.Pool, bet_id: str) -> store.Bet:
    async with pool.acquire() as conn:
        b = await store.bet(conn, bet_id)
    assert b is not None
    return b


async def test_E2_K1_a_bettor_whose_time_ran_out_while_postgres_was_away_gets_a_whole_window_once_it_is_back(
    pool: asyncpg.Pool,
) -> None:
    """As the auction service does for a bidder (and the table, whose clock stands still while it cannot
    save): once Postgres is back the bet's window starts again, and only its end declines the bet."""
    refusing = RefusingPool(pool)
    casino = Casino(refusing)  # type: ignore[arg-type]
    table_id = "t-" + uuid.uuid4().hex[:8]
    assert await casino.open(table_id, 10, 0, 5_000, wall_ms() + 400)
    bet_id = f"{table_id}:10"
    refusing.down = True
    await asyncio.sleep(0.8)  # the deadline passes while every write is refused
    refusing.down = False
    back = wall_ms()
    for _ in range(200):  # the time-out's next try finds Postgres back
        b = await bet_row(pool, bet_id)
        if b.deadline_unix_ms > back or b.status != "open":
            break
        await asyncio.sleep(0.05)
    assert b.status == "open", f"declined ({b.reason}) for the platform's outage"
    assert b.deadline_unix_ms >= back + 300  # the whole window again (400 ms, less the clocks' rounding)
    for _ in range(200):
        b = await bet_row(pool, bet_id)
        if b.status != "open":
            break
        await asyncio.sleep(0.05)
    assert (b.status, b.reason) == ("declined", "timeout")  # the new window ran out
    casino.stop()


async def test_K4_a_late_copy_of_an_old_bet_settled_marks_its_own_bet_not_a_newer_one(pool: asyncpg.Pool) -> None:
    """BetSettled names no bet: it is the bet the table had open when it applied it (the latest opened
    before it). A copy of an old one read again (a consumer read from its ack floor) must not mark the
    seat's newer settled bet applied: that one, closed by the table before it applied it, is void."""
    table_id = "t-" + uuid.uuid4().hex[:8]
    async with pool.acquire() as conn:
        for seq in (10, 30):
            assert await store.open_bet(conn, f"{table_id}:{seq}", table_id, seq, 0, 5_000, wall_ms() + 60_000)
            await store.close_bet(conn, f"{table_id}:{seq}", "settled", None)
        await store.mark_applied(conn, table_id, 0, 12)  # the table's BetSettled of the first bet (seq 12)
        assert (await store.bet(conn, f"{table_id}:10")).applied  # type: ignore[union-attr]
        assert not (await store.bet(conn, f"{table_id}:30")).applied  # type: ignore[union-attr]
        await store.mark_applied(conn, table_id, 0, 33)
        assert (await store.bet(conn, f"{table_id}:30")).applied  # type: ignore[union-attr]


async def test_E2_the_window_given_again_is_the_one_the_table_gave_not_what_was_left_when_read(
    pool: asyncpg.Pool,
) -> None:
    """A bet read late (a backlog after a restart) has little of its time left when the service opens it:
    an outage's grace still gives the bettor the whole window the table's event gave."""
    casino = Casino(pool)
    table_id = "t-" + uuid.uuid4().hex[:8]
    assert await casino.open(table_id, 10, 0, 5_000, wall_ms() + 100, window_ms=1_500)
    now = wall_ms()
    async with pool.acquire() as conn:
        assert await store.restart_window(conn, f"{table_id}:10", now) == now + 1_500
    casino.stop()


async def test_E2_K1_a_bet_heard_late_gives_the_bettor_the_whole_window_from_then(pool: asyncpg.Pool) -> None:
    """The table's CasinoOpened read 10 s late (the casino service was restarting after a crash, or NATS
    away): nobody could bet meanwhile, so the bettor's window (7.5 s here) runs from when the service
    opens the bet, as an auction's first bidder's does, not from the table's event."""
    casino = Casino(pool)
    table_id = "t-" + uuid.uuid4().hex[:8]
    opened = CasinoOpened(seat=0, cash=5_000, deadline=60_000 + 75_000)  # the turn timer: 75 game s
    late = envelope(table_id, 10, opened, game_ms=60_000, scale=10, wall_ms=wall_ms() - 10_000)
    before = wall_ms()
    await handle_envelope(casino, late)
    b = await bet_row(pool, f"{table_id}:10")
    assert b.status == "open"
    assert b.deadline_unix_ms >= before + 7_500, "the bettor's time ran out before the service heard of the bet"
    casino.stop()
