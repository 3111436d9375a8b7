"""What every fault test does around its fault: bot tables on the seats matchmaking gave, each playing
from the moment it formed (`form_and_play`), and the checks once the games ended: the records agree,
money balances, each sub-protocol result was applied once, each game was rated once, nobody is left
queued.

Shared by the single-instance fault suite (`test_faults`) and the chaos test of several instances
(`test_chaos`); both hand in what the checks read (`Records`).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol

import asyncpg
import nats
from rich.console import Console

from client import BotTable, SubProtocolStubs
from client.demo import ledger, queue_players
from client.matchmaking import MatchmakingClient, SeatTicket
from client.verify import check_table
from engine import TableState
from monopoly.v1 import table_pb2_grpc
from servicekit.wire import stored_event


class Records(Protocol):
    """Where the checks read: the suite's own Postgres pool and JetStream, the table API, the services."""

    pool: asyncpg.Pool
    js: nats.js.JetStreamContext
    stub: table_pb2_grpc.TableServiceStub
    services: SubProtocolStubs


@dataclass
class Playing:
    """The tables matchmaking formed and their drivers, each started as its table formed."""

    tickets: dict[str, list[SeatTicket]]
    games: list[BotTable]
    tasks: list[asyncio.Task[TableState]]
    #: How long matchmaking took to form them all (the first table's clock ran all that time).
    formed_s: float


async def form_and_play(
    rig: Records, mm: MatchmakingClient, tables: int, seats: int, clock_scale: int, deadline_s: float
) -> Playing:
    """Queue `tables` tables' worth of players; a bot driver acts for the seats of each table from
    the moment it forms. Its clock runs from then (E2): a table whose bots waited for the last table
    to form lost its turns meanwhile, and at a fast clock could end by missed turns unplayed."""
    games: list[BotTable] = []
    tasks: list[asyncio.Task[TableState]] = []
    started = time.monotonic()

    async def sit_down(table_id: str, seated: list[SeatTicket]) -> None:
        game = BotTable(
            rig.stub,
            players=seats,
            seed=len(games) + 1,
            clock_scale=clock_scale,
            services=rig.services,
            table_id=table_id,
            tokens={t.seat: t.seat_token for t in seated},
            deadline_s=deadline_s,
        )
        games.append(game)
        tasks.append(asyncio.create_task(game.play()))

    try:
        tickets = await queue_players(mm, tables, seats, "classic", Console(stderr=True, quiet=True), sit_down)
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
    return Playing(tickets, games, tasks, time.monotonic() - started)


async def until_playing(rig: Records, playing: Playing, commands: int, timeout: float) -> None:
    """Wait until every table's bots committed `commands` commands (or its game ended). A driver that
    gave up fails the wait at once with its error; at `timeout`, the tables behind are described."""
    deadline = time.monotonic() + timeout
    while True:
        behind = [g for g in playing.games if g.commands < commands and not (g.state is not None and g.state.finished)]
        if not behind:
            return
        for task in playing.tasks:
            if task.done() and not task.cancelled() and task.exception() is not None:
                task.result()  # a client that gave up raises here
        if time.monotonic() > deadline:
            raise AssertionError(
                f"{len(behind)} of {len(playing.games)} tables made fewer than {commands} commands "
                f"in {timeout:.0f} s:\n" + await describe_stalled(rig, behind)
            )
        await asyncio.sleep(0.05)


async def wait_until(predicate: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)


async def eventually(check: Callable[[], Awaitable[bool]], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while True:
        with contextlib.suppress(OSError, asyncpg.PostgresError, asyncpg.InterfaceError):
            if await check():
                return
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.2)


#: A game whose driver committed nothing for this long is stalled (`until_ended`).
GAME_STALL_S = 60.0


async def until_ended(
    tasks: list[asyncio.Task[TableState]], games: list[BotTable], cap_s: float, stall_s: float = GAME_STALL_S
) -> list[BotTable]:
    """Wait for the games' drivers to end; the games still playing when they all stood still (no command
    committed by any of them) for `stall_s`, or at `cap_s`. A loaded machine plays slower; a stalled
    table plays not at all."""
    loop = asyncio.get_running_loop()
    started = last_progress = loop.time()
    progress = -1
    while True:
        _, pending = await asyncio.wait(tasks, timeout=2.0)
        playing = [g for g, t in zip(games, tasks, strict=True) if t in pending]
        if not playing:
            return []
        committed = sum(g.commands for g in playing)
        if committed != progress:
            progress, last_progress = committed, loop.time()
        if loop.time() - last_progress > stall_s or loop.time() - started > cap_s:
            return playing


async def describe_stalled(rig: Records, games: list[BotTable]) -> str:
    """What a game that never ended was waiting for: its driver's replica and last answers against what
    Postgres holds (the table's seq, its last events, its partition's owner), one line per game."""
    lines = []
    for g in games:
        replica = g.state
        mine = (
            f"replica seq {replica.seq} phase {replica.phase.name} actor {replica.actor} paused {replica.paused}"
            if replica is not None
            else "no replica"
        )
        acting = g._acting  # a test's diagnosis of the driver
        busy = "none" if acting is None else ("done" if acting.done() else "running")
        try:
            async with rig.pool.acquire() as conn:
                row = await conn.fetchrow("SELECT seq, finished FROM tables WHERE table_id = $1", g.table_id)
                last = await conn.fetch(
                    "SELECT seq, type FROM table_events WHERE table_id = $1 ORDER BY seq DESC LIMIT 4", g.table_id
                )
                owner = await conn.fetchval(
                    "SELECT l.owner FROM partition_leases l JOIN tables t ON t.partition = l.partition "
                    "WHERE t.table_id = $1",
                    g.table_id,
                )
            recent = ", ".join(f"{r['seq']}:{r['type']}" for r in reversed(last))
            held = f"Postgres seq {row['seq']} finished {row['finished']}, last events {recent}, owner {owner}"
        except Exception as exc:  # a diagnosis must not hide the failure it explains
            held = f"Postgres not read ({type(exc).__name__}: {exc})"
        lines.append(
            f"{g.table_id}: {mine}; acting task {busy}; {g.commands} commands, {g.unavailable} retries, "
            f"answers {dict(g.status_codes)}, {g.errors} errors, {g.stale_watches} silent watches; {held}"
        )
    return "\n".join(lines)


#: R1: the rounds a game must last to be rated.
MIN_ROUNDS = 10
#: How long the ratings may stand still before the check gives up on them (`while_progressing`).
RATING_STALL_S = 60.0


async def while_progressing(check: Callable[[], Awaitable[tuple[int, bool]]], stall_s: float, what: str) -> None:
    """Wait until `check` says done; it also returns a count of what is done so far, and the wait fails
    only when that count stood still for `stall_s` (a backlog worked through is not a stall)."""
    best = -1
    deadline = time.monotonic() + stall_s
    while True:
        with contextlib.suppress(OSError, asyncpg.PostgresError, asyncpg.InterfaceError):
            count, done = await check()
            if done:
                return
            if count > best:
                best, deadline = count, time.monotonic() + stall_s
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}: no progress in {stall_s:.0f} s (at {best})")
        await asyncio.sleep(0.2)


async def check_records(rig: Records, games: list[BotTable], tickets: dict[str, list[SeatTicket]]) -> int:
    events = 0
    for g in games:
        assert g.state is not None and g.state.finished, g.table_id
        agreement = await check_table(rig.pool, rig.js, rig.stub, g.table_id)
        assert agreement.contiguous, f"{g.table_id}: seq gap (rows vs stream) {agreement}"
        assert agreement.ok, f"{g.table_id}: records disagree {agreement}"
        events += agreement.rows
        book = await ledger(g, rig.services)
        assert book.balanced, f"{g.table_id}: money ledger off"
        await applied_once(rig, g.table_id)
    players = [t.player.player_id for seated in tickets.values() for t in seated]
    table_ids = list(tickets)
    # R1: a game of fewer than 10 rounds is judged unrated (a fault can end one early: missed turns, E2);
    # the rest rated. Either way each game is judged once, every seat with one result.
    rated = {g.table_id: g.state is not None and g.state.round >= MIN_ROUNDS for g in games}

    async def judged() -> tuple[int, bool]:
        async with rig.pool.acquire() as conn:
            rows = await conn.fetch(
                "SELECT table_id, rated FROM rating.rated_games WHERE table_id = ANY($1::text[])", table_ids
            )
            results = await conn.fetchval(
                "SELECT count(*) FROM rating.results WHERE table_id = ANY($1::text[])", table_ids
            )
            rounds = await conn.fetchval(  # the turn signals worked through so far
                "SELECT COALESCE(sum(rounds), 0) FROM rating.tables WHERE table_id = ANY($1::text[])", table_ids
            )
        done = len(rows) == len(table_ids) and results == len(players)
        if done:
            verdicts = {r["table_id"]: r["rated"] for r in rows}
            assert verdicts == rated, f"verdicts {verdicts}, by R1 {rated}"
        return len(rows) + results + rounds, done

    # The rating service works through every game's turn signals first: after a chaos its backlog may
    # take minutes on a loaded machine. Waited for while it moves; a stall of RATING_STALL_S fails.
    await while_progressing(judged, RATING_STALL_S, "every game judged")
    rated_players = sorted(t.player.player_id for tid, seated in tickets.items() if rated[tid] for t in seated)
    async with rig.pool.acquire() as conn:
        games_per_player = await conn.fetch(
            "SELECT player, games FROM rating.ratings WHERE player = ANY($1::text[])", players
        )
    assert sorted((r["player"], r["games"]) for r in games_per_player) == [(p, 1) for p in rated_players]

    async def nobody_left() -> bool:
        async with rig.pool.acquire() as conn:
            waiting = await conn.fetchval(
                "SELECT count(*) FROM matchmaking.tickets WHERE status = 'waiting' AND player_id = ANY($1::text[])",
                players,
            )
            live = await conn.fetchval(
                "SELECT count(*) FROM matchmaking.matches WHERE status = 'live' AND table_id = ANY($1::text[])",
                table_ids,
            )
        return waiting == 0 and live == 0

    await eventually(nobody_left, 60, "no player left queued or in a live match")
    return events


async def applied_once(rig: Records, table_id: str) -> None:
    """Each settled auction, bet and executed trade is in the table's events once, as its service says."""
    async with rig.pool.acquire() as conn:
        rows = await conn.fetch(
            "SELECT type, envelope, payload FROM table_events WHERE table_id = $1 "
            "AND type IN ('AuctionSettled', 'BetSettled', 'BetDeclined', 'TradeExecuted')",
            table_id,
        )
        auctions = await conn.fetchval(
            "SELECT count(*) FROM auction.auctions WHERE table_id = $1 AND status = 'settled'", table_id
        )
        trades = await conn.fetchval(
            "SELECT count(*) FROM trade.trades WHERE table_id = $1 AND status = 'executed'", table_id
        )
        bets = await conn.fetchval(
            "SELECT count(*) FROM casino.bets WHERE table_id = $1 AND status IN ('settled', 'declined')", table_id
        )
    kinds = [r["type"] for r in rows]
    auction_ids = [stored_event(r["envelope"], r["payload"]).auction_id for r in rows if r["type"] == "AuctionSettled"]
    trade_ids = [stored_event(r["envelope"], r["payload"]).trade_id for r in rows if r["type"] == "TradeExecuted"]
    assert len(auction_ids) == len(set(auction_ids)) == auctions, (table_id, auction_ids, auctions)
    assert len(trade_ids) == len(set(trade_ids)) == trades, (table_id, trade_ids, trades)
    assert kinds.count("BetSettled") + kinds.count("BetDeclined") == bets, (table_id, kinds, bets)
