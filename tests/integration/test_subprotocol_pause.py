"""E5 across a restart of the auction or casino service: the table is paused while the service is down
and the bidder's (or bettor's) deadline passes during the pause. The restarted service re-arms its
timers before its consumer has read the table's `GamePaused`; a time-out must wait for it (the table
applies a service's result even while paused), so nothing moves until the game resumes."""

from __future__ import annotations

import asyncio
import time

import asyncpg
import pytest

from client import connect
from client.auction import AuctionClient
from client.casino import connect as casino_connect
from client.platform import Platform
from engine import RequestPause, VotePause

from .test_auction import PLAYERS, declined, opened
from .test_casino import Table, bet_opened, jackpot_seed

pytestmark = pytest.mark.integration


@pytest.fixture
def plat(platform: Platform) -> Platform:
    """The session's platform: a table service of this module's own beside it would share its
    partitions and its consumers (the auction and casino results), and hold no partition until the
    session's instance handed some back."""
    return platform


async def test_E5_a_restarted_auction_service_times_out_no_bidder_of_a_paused_game(
    plat: Platform, pool: asyncpg.Pool
) -> None:
    channel, stub = connect(plat.table_target)
    async with channel, AuctionClient(plat.target("auction")) as auctions:
        scale = 4  # 20 game s to bid = 5 wall s
        game, _, square = await declined(stub, 600, scale)
        view = await opened(auctions, game.table_id)
        first, second = view.bidders
        view = await auctions.bid(game.table_id, first, view.min_bid, game.tokens[first])
        assert view.bidder == second and view.status == "open"

        await plat.processes["auction"].kill()  # the service dies with the auction open
        # E5: every active player agrees; the table is paused: every timer stands still
        await game.submit(RequestPause(second))
        for seat in range(len(PLAYERS)):
            if seat != second:
                await game.submit(VotePause(seat, True))
        await game.until(lambda s: s.paused)
        paused_at = time.time()
        # the bidder's wall deadline passes while the game is paused
        await asyncio.sleep(max(0.0, view.deadline_unix_ms / 1000 - time.time()) + 1.0)
        await plat.processes["auction"].start()
        await asyncio.sleep(3.0)

        state = await game.state()
        row = await pool.fetchrow(
            "SELECT status, moves, winner, price, paused_left_ms FROM auction.auctions WHERE table_id = $1",
            game.table_id,
        )
        moves = await pool.fetch(
            "SELECT n, seat, kind, amount, extract(epoch FROM created_at) AS at FROM auction.auction_moves "
            "WHERE table_id = $1 ORDER BY n",
            game.table_id,
        )
        timeouts = [m for m in moves if m["kind"] == "timeout" and m["at"] > paused_at]
        assert state.paused, "the table should still be paused"
        assert not timeouts, (
            f"E5 broken: seat {second} timed out while the game was paused (auction {row['status']}, "
            f"square {square} owner now {state.owner[square]})"
        )
        assert row["status"] == "open" and row["paused_left_ms"] is not None  # the clock stands still


async def test_E5_a_restarted_casino_service_declines_no_bet_of_a_paused_game(
    plat: Platform, pool: asyncpg.Pool
) -> None:
    channel, stub = connect(plat.table_target)
    async with channel:
        casino_channel, casino = casino_connect(plat.target("casino"))
        try:
            table = await Table(stub, scale=15).create(pool, pool_seed=jackpot_seed((False,)))  # 75 s turn: 5 s
            state = await table.to_casino()
            seat, other = state.current, 1 - state.current
            bet = await bet_opened(casino, table.table_id)
            await plat.processes["casino"].kill()
            await table.submit(RequestPause(seat))
            await table.submit(VotePause(other, True))
            st = await table.state()
            assert st.paused
            paused_at = time.time()
            await asyncio.sleep(max(0.0, (bet.deadline_unix_ms / 1000 - time.time())) + 1.0)
            await plat.processes["casino"].start()
            await asyncio.sleep(3.0)
            row = await pool.fetchrow(
                "SELECT status, reason, paused, extract(epoch FROM closed_at) AS closed FROM casino.bets "
                "WHERE bet_id = $1",
                bet.bet_id,
            )
            st = await table.state()
            assert st.paused
            assert row["status"] == "open", (
                f"E5 broken: bet {bet.bet_id} {row['status']} ({row['reason']}) at "
                f"{float(row['closed']) - paused_at:.2f} s into the pause"
            )
        finally:
            await casino_channel.close()
