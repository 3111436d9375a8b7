"""`monopoly run` and `monopoly demo`: the platform with bot tables, watched or verified."""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path

import asyncpg
import nats
from rich.console import Console, Group
from rich.live import Live
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table

from engine import Event, TableState, check_invariants
from engine.invariants import InvariantBroken
from monopoly.v1 import casino_pb2
from servicekit.bus import ensure_stream
from servicekit.embedded import servers
from sim.narrate import describe

from . import BotTable, SubProtocolStubs, connect
from .platform import Platform
from .verify import check_table


async def demo(tables: int, data_dir: Path, mode: str = "classic", clock_scale: int = 60) -> int:
    """Play `tables` bot tables through the API to the end, then check every table's records agree."""
    err = Console(stderr=True)
    with servers(data_dir) as (nats_url, db_url):
        err.print(f"NATS {nats_url}\nPostgres {db_url}")
        platform = Platform(nats_url, db_url, data_dir, clock_scale)
        await platform.start()
        err.print(
            f"services: {', '.join(f'{n} {platform.target(n)}' for n in platform.processes)}; "
            f"playing {tables} {mode} tables of bots..."
        )
        channel, stub = connect(platform.table_target)
        services = SubProtocolStubs.connect({n: platform.target(n) for n in platform.external})
        players = 3 if mode == "duel" else 4
        games = [
            BotTable(stub, mode=mode, players=players, seed=i + 1, clock_scale=clock_scale, services=services)
            for i in range(tables)
        ]
        started = time.perf_counter()
        for g in games:
            await g.create()
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
        await nc.close()
        await pool.close()
        await services.close()
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
    verdict = {True: "yes", False: "NO"}
    print(f"every table's records agree: {verdict[agree]}; money ledger balanced: {verdict[totals.balanced]}")
    return 0 if ok else 1


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


async def run(data_dir: Path, tables: int = 3, clock_scale: int = 60, duration: float | None = None) -> int:
    """The platform with `tables` bot tables at a time and a live view, until Ctrl-C."""
    with servers(data_dir) as (nats_url, db_url):
        platform = Platform(nats_url, db_url, data_dir, clock_scale)
        await platform.start()
        channel, stub = connect(platform.table_target)
        services = SubProtocolStubs.connect({n: platform.target(n) for n in platform.external})
        running: dict[str, tuple[BotTable, asyncio.Task[TableState]]] = {}
        latest: deque[str] = deque(maxlen=12)
        seen: dict[str, int] = {}
        finished = 0
        seed = 0
        rates: deque[tuple[float, int, int]] = deque(maxlen=20)

        def remember(g: BotTable, event: Event) -> None:
            if g.state is not None and (line := describe(g.state, event)):
                latest.append(f"{g.table_id}  {escape(line.strip())}")

        async def refill() -> None:
            nonlocal seed
            while len(running) < tables:
                seed += 1
                g = BotTable(
                    stub, seed=seed, clock_scale=clock_scale, think_s=0.3, on_event=remember, services=services
                )
                await g.create()
                running[g.table_id] = (g, asyncio.create_task(g.play()))

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
                f"services {', '.join(platform.processes)} | NATS {nats_url} | tables running {len(running)}, "
                f"finished {finished} | {(commands - c0) / span:.0f} commands/s, {(events - e0) / span:.0f} events/s"
                " | Ctrl-C stops"
            )
            return Group(Panel(header), view, Panel("\n".join(latest) or "...", title="latest events"))

        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(2, stop.set)
        started = time.monotonic()
        try:
            await refill()
            with Live(render(), refresh_per_second=4, console=Console()) as live:
                while not stop.is_set():
                    await asyncio.sleep(0.25)
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
            for _, task in running.values():
                task.cancel()
            await asyncio.gather(*(task for _, task in running.values()), return_exceptions=True)
            await services.close()
            await channel.close()
            await platform.stop()
    print(f"stopped: {finished} tables finished", file=sys.stderr)
    return 0


__all__ = ["demo", "run"]
