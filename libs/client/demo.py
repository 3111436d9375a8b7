"""`monopoly demo`: the platform with bot tables played to their end and verified (`monopoly run`: `client.run`)."""

from __future__ import annotations

import asyncio
import sys
import time
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import asyncpg
import grpc
from rich.console import Console
from rich.table import Table

from engine import AuctionStarted, Event, TableState, check_invariants
from engine.invariants import InvariantBroken
from monopoly.v1 import casino_pb2, rating_pb2, rating_pb2_grpc
from servicekit import natsauth
from servicekit import tls as tlskit
from servicekit.embedded import DataDirBusy, servers
from servicekit.settings import TLSSettings

from . import BotTable, SubProtocolStubs, connect
from .channels import platform_channel
from .matchmaking import MatchmakingClient, Player, SeatTicket
from .platform import Platform
from .run import NAMES, RATING_MIN_REAL_MINUTES, run
from .verify import check_table

#: The demo's games last seconds, not R1's 10 real minutes: the demo lowers that minimum (and says so).
DEMO_RATING_MIN_REAL_MINUTES = RATING_MIN_REAL_MINUTES


async def demo(tables: int, data_dir: Path, mode: str = "classic", clock_scale: int = 60) -> int:
    """Players queue, get matched into `tables` tables, play them to the end through the API (bots choose
    their moves), and see their ratings change; then every table's records and money are checked."""
    try:
        return await _demo(tables, data_dir, mode, clock_scale)
    except DataDirBusy as exc:  # `make run` on the same folder, say
        print(f"monopoly demo: {exc}", file=sys.stderr)
        return 1


async def _demo(tables: int, data_dir: Path, mode: str, clock_scale: int) -> int:
    err = Console(stderr=True)
    with servers(data_dir) as (nats_url, db_url, bus):
        err.print(f"NATS {nats_url}\nPostgres {db_url}")
        platform = Platform(
            nats_url,
            db_url,
            data_dir,
            clock_scale,
            extra_env={"RATING_MIN_REAL_MINUTES": DEMO_RATING_MIN_REAL_MINUTES},
            bus=bus,
        )
        await platform.start()
        err.print(f"services: {', '.join(f'{n} {platform.target(n)}' for n in platform.processes)}")
        err.print(
            f"rating: R1's minimum of 10 real minutes is lowered to {DEMO_RATING_MIN_REAL_MINUTES} for this demo "
            "(RATING_MIN_REAL_MINUTES); every other condition of R1 holds"
        )
        channel, stub = connect(platform.table_target)
        services = SubProtocolStubs.connect({n: platform.target(n) for n in platform.external})
        rating_channel = platform_channel(platform.target("rating"))
        rating = rating_pb2_grpc.RatingServiceStub(rating_channel)
        seats_per_table = 3 if mode == "duel" else 4
        reasons: Counter[str] = Counter()  # auctions by why they opened (A1/A2, P10, D4, M3)

        def opened(_table: BotTable, event: Event) -> None:
            if isinstance(event, AuctionStarted):
                reasons[event.reason] += 1

        started = time.perf_counter()
        games: list[BotTable] = []
        plays: list[asyncio.Task[TableState]] = []
        before: dict[str, rating_pb2.Profile] = {}
        done = 0

        async def play(g: BotTable) -> TableState:
            nonlocal done
            state = await g.play()
            done += 1
            err.print(f"  {done}/{tables} tables finished ({g.table_id}: {state.round} rounds)")
            return state

        async def sit_down(table_id: str, seated: list[SeatTicket]) -> None:
            """A table's bots start as it forms: its clock is already running."""
            before.update({t.player.player_id: await profile(rating, t.player) for t in seated})
            game = BotTable(
                stub,
                mode=mode,
                players=seats_per_table,
                seed=len(games) + 1,
                clock_scale=clock_scale,
                services=services,
                table_id=table_id,
                tokens={t.seat: t.seat_token for t in seated},
                on_event=opened,
            )
            games.append(game)
            plays.append(asyncio.create_task(play(game)))

        try:
            async with MatchmakingClient(platform.target("matchmaking")) as mm:
                tickets = await queue_players(mm, tables, seats_per_table, mode, err, on_table=sit_down)
            err.print(f"all {len(games)} {mode} tables formed and playing...")
            states = await asyncio.gather(*plays)
        finally:
            for task in plays:
                task.cancel()
            await asyncio.gather(*plays, return_exceptions=True)
        elapsed = time.perf_counter() - started
        pool = await asyncpg.create_pool(db_url, min_size=1, max_size=4)
        # the stream is read as the analytics reader: it reads the table events and may do nothing else
        nc, js = await natsauth.connect(
            bus.url_for(natsauth.ANALYTICS) if bus else nats_url, tls=tlskit.nats_context(TLSSettings.from_env())
        )
        checks = [await check_table(pool, js, stub, g.table_id) for g in games]
        ledgers = [await ledger(g, services) for g in games]
        verdicts = {g.table_id: await game_verdict(rating, g.table_id) for g in games}
        after = {t.player.player_id: await profile(rating, t.player) for seated in tickets.values() for t in seated}
        board = await rating.Leaderboard(rating_pb2.LeaderboardRequest(pool="ffa", page_size=10), timeout=10)
        await nc.close()
        await pool.close()
        await services.close()
        await rating_channel.close()
        await channel.close()
        await platform.stop()
    out = Table(title=f"{tables} {mode} tables in {elapsed:.1f} s")
    columns = (
        "table",
        "rounds",
        "winner",
        "commands",
        "auctions",
        "trades",
        "bets",
        "pool",
        "events",
        "agree",
        "ledger",
    )
    for col in columns:
        out.add_column(col)
    for g, state, c, book in zip(games, states, checks, ledgers, strict=True):
        out.add_row(
            g.table_id,
            str(state.round),
            state.players[state.winner].name,
            str(g.commands),
            str(book.auctions),
            str(book.trades),
            str(book.bets),
            f"${book.pool:,}",
            f"{c.rows}/{c.stream_events}",
            "yes" if c.ok else "NO",
            "balanced" if book.balanced else "OFF",
        )
    Console(width=None if sys.stdout.isatty() else 160).print(out)
    commands = sum(g.commands for g in games)
    moves = {name: sum(g.service_moves[name] for g in games) for name in ("auction", "trade", "casino")}
    totals = Ledger(
        auctions=sum(b.auctions for b in ledgers),
        trades=sum(b.trades for b in ledgers),
        bets=sum(b.bets for b in ledgers),
        pool=sum(b.pool for b in ledgers),
        balanced=all(b.balanced for b in ledgers),
    )
    agree = all(c.ok for c in checks) and all(s.finished for s in states)
    ok = agree and totals.balanced
    print(f"{commands} table commands ({commands / elapsed:.0f}/s)")
    print(
        f"through the services: {totals.auctions} auctions settled ({moves['auction']} bids and passes), "
        f"{totals.trades} trades executed ({moves['trade']} proposals and answers), "
        f"{totals.bets} casino bets settled ({moves['casino']} bets and declines); "
        f"jackpot pools at the end ${totals.pool:,}"
    )
    print("auctions by reason: " + (", ".join(f"{n} {why}" for why, n in sorted(reasons.items())) or "none"))
    off_turn = sum((g.any_time_moves for g in games), Counter[str]())
    if off_turn:  # hasbro: P10 and T6 let a player act outside their turn
        cards = sum(g.event_counts["JailCardsTraded"] for g in games)
        kinds = ", ".join(f"{n} {kind}" for kind, n in sorted(off_turn.items()))
        print(f"outside their turn (P10, T6): {kinds}; trades with Get Out of Jail Free cards: {cards}")
    print_ratings(tickets, games, states, verdicts, before, after, board)
    verdict = {True: "yes", False: "NO"}
    print(f"every table's records agree: {verdict[agree]}; money ledger balanced: {verdict[totals.balanced]}")
    return 0 if ok else 1


async def queue_players(
    mm: MatchmakingClient,
    tables: int,
    seats: int,
    mode: str,
    err: Console,
    on_table: Callable[[str, list[SeatTicket]], Awaitable[None]] | None = None,
) -> dict[str, list[SeatTicket]]:
    """Register players and queue them, a table's worth at a time, until `tables` tables have formed.

    A formed table's clock runs (E1, E2): `on_table` is awaited with each table as it forms, so its
    players can sit down at once. A table left until the last one formed would lose its turns to
    time-outs meanwhile, and at a fast clock could end by missed turns before anyone played."""
    tag = uuid.uuid4().hex[:4]
    tickets: dict[str, list[SeatTicket]] = {}
    for t in range(tables):
        players = [
            await mm.register(f"{NAMES[(t * seats + i) % len(NAMES)]}-{tag}{t * seats + i}") for i in range(seats)
        ]
        for p in players:
            await mm.enqueue(p, mode)
        seated = await asyncio.gather(*(mm.wait_match(p) for p in players))
        for ticket in seated:
            tickets.setdefault(ticket.table_id, []).append(ticket)
        err.print(f"  queued {', '.join(p.display_name for p in players)} -> table {seated[0].table_id}")
        if on_table is not None:
            await on_table(seated[0].table_id, tickets[seated[0].table_id])
    return tickets


async def profile(rating: rating_pb2_grpc.RatingServiceStub, player: Player) -> rating_pb2.Profile:
    """A player's profile, by id (tables formed by matchmaking) or else by display name."""
    found: rating_pb2.Profile = rating_pb2.Profile()
    for key in (player.player_id, player.display_name):
        found = await rating.GetProfile(rating_pb2.GetProfileRequest(player=key), timeout=10)
        if found.games:
            break
    return found


async def game_verdict(rating: rating_pb2_grpc.RatingServiceStub, table_id: str, wait_s: float = 30.0) -> str:
    """How the rating service judged a finished game: "rated", or why not."""
    deadline = asyncio.get_running_loop().time() + wait_s
    while True:
        try:
            game = await rating.GetGame(rating_pb2.GetGameRequest(table_id=table_id), timeout=10)
        except grpc.aio.AioRpcError as exc:
            if exc.code() != grpc.StatusCode.NOT_FOUND or asyncio.get_running_loop().time() > deadline:
                return f"not judged ({exc.code().name})"
            await asyncio.sleep(0.2)
            continue
        return "rated" if game.rated else f"not rated: {game.reason}"


def ffa(profile: rating_pb2.Profile) -> tuple[float, int]:
    for r in profile.ratings:
        if r.pool == "ffa":
            return r.ordinal, r.games
    return 0.0, 0


def print_ratings(
    tickets: dict[str, list[SeatTicket]],
    games: list[BotTable],
    states: list[TableState],
    verdicts: dict[str, str],
    before: dict[str, rating_pb2.Profile],
    after: dict[str, rating_pb2.Profile],
    board: rating_pb2.LeaderboardPage,
) -> None:
    out = Table(title="players: queue -> table -> rating")
    for col in ("table", "place", "player", "verdict", "rated games", "ordinal before", "after", "change", "XP"):
        out.add_column(col)
    for g, state in zip(games, states, strict=True):
        places = {seat: i + 1 for i, seat in enumerate([state.winner, *reversed(state.eliminated)])}
        for t in sorted(tickets[g.table_id], key=lambda t: places.get(t.seat, 99)):
            pid = t.player.player_id
            (o0, _), (o1, n1) = ffa(before[pid]), ffa(after[pid])
            out.add_row(
                g.table_id,
                str(places.get(t.seat, "?")),
                t.player.display_name,
                verdicts[g.table_id],
                str(n1),
                f"{o0:.2f}",
                f"{o1:.2f}",
                f"{o1 - o0:+.2f}",
                str(after[pid].xp - before[pid].xp),
            )
    Console(width=None if sys.stdout.isatty() else 160).print(out)
    top = ", ".join(f"{e.rank}. {e.display_name} {e.ordinal:.2f}" for e in board.entries)
    print(f"leaderboard (ffa, {board.total} players): {top or 'empty'}")


@dataclass(frozen=True)
class Ledger:
    """A finished table's sub-protocol counts and its money reconciliation."""

    auctions: int
    trades: int
    bets: int
    pool: int
    balanced: bool


async def ledger(g: BotTable, services: SubProtocolStubs) -> Ledger:
    """Count what the services settled and reconcile the money: every player's cash, the bank's
    ledger and the jackpot pool add up (the engine's invariant), and the casino service's pool
    equals the table's."""
    state = g.state
    assert state is not None
    balanced = True
    try:
        check_invariants(state, state.seq)
    except InvariantBroken:
        balanced = False
    if services.casino is not None:
        pool = await services.casino.GetPool(casino_pb2.GetPoolRequest(table_id=g.table_id), timeout=30)
        balanced = balanced and pool.pool == state.jackpot
    counts = g.event_counts
    return Ledger(counts["AuctionSettled"], counts["TradeExecuted"], counts["BetSettled"], state.jackpot, balanced)


__all__ = ["demo", "run"]
