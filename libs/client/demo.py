"""`monopoly run` and `monopoly demo`: the platform with bot tables, watched or verified."""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
import uuid
from collections import Counter, deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncpg
import grpc
import nats
from rich.console import Console, Group
from rich.live import Live
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table

from engine import AuctionStarted, Event, TableState, check_invariants
from engine.invariants import InvariantBroken
from monopoly.v1 import casino_pb2, rating_pb2, rating_pb2_grpc
from servicekit.bus import ensure_stream
from servicekit.embedded import servers
from sim.narrate import describe

from . import BotTable, SubProtocolStubs, connect
from .botseats import BotSeats
from .matchmaking import MatchmakingClient, Player, SeatTicket
from .platform import Platform
from .verify import check_table

#: Names of the demo's players: people (as far as the rating service can tell) whose moves bots choose.
NAMES = ("ada", "bruno", "chen", "dara", "emeka", "farah", "goran", "hana", "ivo", "jun", "kemal", "lea")
#: The demo's games last seconds, not R1's 10 real minutes: the demo lowers that minimum (and says so).
DEMO_RATING_MIN_REAL_MINUTES = "0.005"


async def demo(tables: int, data_dir: Path, mode: str = "classic", clock_scale: int = 60) -> int:
    """Players queue, get matched into `tables` tables, play them to the end through the API (bots choose
    their moves), and see their ratings change; then every table's records and money are checked."""
    err = Console(stderr=True)
    with servers(data_dir) as (nats_url, db_url):
        err.print(f"NATS {nats_url}\nPostgres {db_url}")
        platform = Platform(
            nats_url, db_url, data_dir, clock_scale, extra_env={"RATING_MIN_REAL_MINUTES": DEMO_RATING_MIN_REAL_MINUTES}
        )
        await platform.start()
        err.print(f"services: {', '.join(f'{n} {platform.target(n)}' for n in platform.processes)}")
        err.print(
            f"rating: R1's minimum of 10 real minutes is lowered to {DEMO_RATING_MIN_REAL_MINUTES} for this demo "
            "(RATING_MIN_REAL_MINUTES); every other condition of R1 holds"
        )
        channel, stub = connect(platform.table_target)
        services = SubProtocolStubs.connect({n: platform.target(n) for n in platform.external})
        rating_channel = grpc.aio.insecure_channel(platform.target("rating"))
        rating = rating_pb2_grpc.RatingServiceStub(rating_channel)
        seats_per_table = 3 if mode == "duel" else 4
        reasons: Counter[str] = Counter()  # auctions by why they opened (A1/A2, P10, D4, M3)

        def opened(_table: BotTable, event: Event) -> None:
            if isinstance(event, AuctionStarted):
                reasons[event.reason] += 1

        started = time.perf_counter()
        async with MatchmakingClient(platform.target("matchmaking")) as mm:
            tickets = await queue_players(mm, tables, seats_per_table, mode, err)
        games = [
            BotTable(
                stub,
                mode=mode,
                players=seats_per_table,
                seed=i + 1,
                clock_scale=clock_scale,
                services=services,
                table_id=table_id,
                tokens={t.seat: t.seat_token for t in seated},
                on_event=opened,
            )
            for i, (table_id, seated) in enumerate(tickets.items())
        ]
        before = {t.player.player_id: await profile(rating, t.player) for seated in tickets.values() for t in seated}
        err.print(f"playing {len(games)} {mode} tables...")
        done = 0

        async def play(g: BotTable) -> TableState:
            nonlocal done
            state = await g.play()
            done += 1
            err.print(f"  {done}/{tables} tables finished ({g.table_id}: {state.round} rounds)")
            return state

        states = await asyncio.gather(*(play(g) for g in games))
        elapsed = time.perf_counter() - started
        pool = await asyncpg.create_pool(db_url, min_size=1, max_size=4)
        nc = await nats.connect(nats_url)
        js = nc.jetstream()
        await ensure_stream(js)
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
    mm: MatchmakingClient, tables: int, seats: int, mode: str, err: Console
) -> dict[str, list[SeatTicket]]:
    """Register players and queue them, a table's worth at a time, until `tables` tables have formed."""
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


async def run(
    data_dir: Path, tables: int = 3, clock_scale: int = 60, duration: float | None = None, mode: str = "classic"
) -> int:
    """The platform with `tables` bot tables of `mode` at a time and a live view, until Ctrl-C."""
    with servers(data_dir) as (nats_url, db_url):
        platform = Platform(
            nats_url, db_url, data_dir, clock_scale, extra_env={
                "RATING_MIN_REAL_MINUTES": DEMO_RATING_MIN_REAL_MINUTES,
                # a person who queued with bot_fill waits 5 s for other people, then bots fill the table
                "MATCHMAKING_SMALL_TABLE_WAIT_S": "5",
            },
        )
        await platform.start()
        channel, stub = connect(platform.table_target)
        services = SubProtocolStubs.connect({n: platform.target(n) for n in platform.external})
        mm = MatchmakingClient(platform.target("matchmaking"))
        # People play in a browser (the gateway's lobby); bots take the seats they leave empty.
        lobby = platform.lobby_url if "gateway" in platform.processes else ""
        if lobby:
            print(f"lobby: {lobby}  (open it in a browser to play against bots)", flush=True)
        bot_seats = BotSeats(stub, mm.stub, services)
        bot_seats_task = asyncio.create_task(bot_seats.run())
        rating_channel = grpc.aio.insecure_channel(platform.target("rating"))
        rating = rating_pb2_grpc.RatingServiceStub(rating_channel)
        leaders: list[str] = []
        queued = 0  # players of this view waiting in the queue
        forming: set[asyncio.Task[None]] = set()
        tag = uuid.uuid4().hex[:4]
        running: dict[str, tuple[BotTable, asyncio.Task[TableState]]] = {}
        latest: deque[str] = deque(maxlen=12)
        seen: dict[str, int] = {}
        finished = 0
        seed = 0
        rates: deque[tuple[float, int, int]] = deque(maxlen=20)
        seats = 3 if mode == "duel" else 4

        def remember(g: BotTable, event: Event) -> None:
            if g.state is not None and (line := describe(g.state, event)):
                latest.append(f"{g.table_id}  {escape(line.strip())}")

        async def form_table(n: int) -> None:
            """A table's players register and queue; matchmaking seats them at a new table, which they play."""
            nonlocal queued
            players = [
                await mm.register(f"{NAMES[(seats * n + i) % len(NAMES)]}-{tag}{seats * n + i}") for i in range(seats)
            ]
            for p in players:
                await mm.enqueue(p, mode)
                queued += 1
            try:
                seated = await asyncio.gather(*(mm.wait_match(p) for p in players))
            finally:
                queued -= len(players)
            g = BotTable(
                stub,
                mode=mode,
                seed=n,
                clock_scale=clock_scale,
                think_s=0.3,
                on_event=remember,
                services=services,
                table_id=seated[0].table_id,
                tokens={t.seat: t.seat_token for t in seated},
            )
            running[g.table_id] = (g, asyncio.create_task(g.play()))

        async def refill() -> None:
            nonlocal seed
            while len(running) + len(forming) < tables:
                seed += 1
                task = asyncio.create_task(form_table(seed))
                forming.add(task)
                task.add_done_callback(forming.discard)

        async def refresh_leaders() -> None:
            board = await rating.Leaderboard(rating_pb2.LeaderboardRequest(pool="ffa", page_size=8), timeout=10)
            leaders[:] = [
                f"{e.rank}. {escape(e.display_name)}  {e.ordinal:.2f} ({e.games} games)" for e in board.entries
            ]

        def render() -> Group:
            nonlocal finished
            view = Table(expand=True)
            for col in ("table", "round", "minute", "phase", "to act", "auction", "trades", "pool", "cash"):
                view.add_column(col)
            for table_id, (g, _task) in list(running.items()):
                s = g.state
                if s is None:
                    continue
                before = seen.get(table_id, 0)
                if s.seq > before:
                    seen[table_id] = s.seq
                view.add_row(
                    table_id,
                    str(s.round),
                    str(s.minute),
                    s.phase.value,
                    s.players[s.actor].name if s.actor >= 0 else "-",
                    f"{s.config.board.squares[s.auction.square].name}" if s.auction is not None else "-",
                    str(g.event_counts["TradeExecuted"]),
                    f"${s.jackpot:,}",
                    " ".join(f"${p.cash:,}" for p in s.players),
                )
            now = time.monotonic()
            commands = sum(g.commands for g, _ in running.values())
            events = sum(seen.values())
            rates.append((now, commands, events))
            t0, c0, e0 = rates[0]
            span = max(now - t0, 1e-6)
            header = (
                f"queue: {queued} players waiting, {len(forming)} tables forming | "
                f"services {', '.join(platform.processes)} | NATS {nats_url} | tables running {len(running)}, "
                f"finished {finished} | {(commands - c0) / span:.0f} commands/s, {(events - e0) / span:.0f} events/s"
                " | Ctrl-C stops" + (f"\nplay in a browser: {lobby}" if lobby else "")
            )
            return Group(
                Panel(header),
                view,
                Panel("\n".join(latest) or "...", title="latest events"),
                Panel("\n".join(leaders) or "no rated game yet", title="leaderboard (ffa)"),
            )

        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(2, stop.set)
        started = time.monotonic()
        try:
            await refill()
            ticks = 0
            with Live(render(), refresh_per_second=4, console=Console()) as live:
                while not stop.is_set():
                    await asyncio.sleep(0.25)
                    ticks += 1
                    if ticks % 8 == 0:  # every 2 s
                        with contextlib.suppress(grpc.aio.AioRpcError):
                            await refresh_leaders()
                    for table_id, (g, task) in list(running.items()):
                        if task.done():
                            finished += 1
                            running.pop(table_id)
                            latest.append(f"{table_id}: game over after {g.state.round if g.state else '?'} rounds")
                    await refill()
                    live.update(render())
                    if duration is not None and time.monotonic() - started > duration:
                        break
        finally:
            waiting: list[asyncio.Task[Any]] = [task for _, task in running.values()] + list(forming)
            for task in waiting:
                task.cancel()
            await asyncio.gather(*waiting, return_exceptions=True)
            bot_seats.stop()
            await bot_seats_task
            await mm.close()
            await rating_channel.close()
            await services.close()
            await channel.close()
            await platform.stop()
    print(f"stopped: {finished} tables finished", file=sys.stderr)
    return 0


__all__ = ["demo", "run"]
