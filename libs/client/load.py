"""`monopoly load`: bot tables at a chosen pace against any running platform, counted honestly.

A load run is only worth its figures if every table it meant to run is accounted for. So each table
has a status, and the report counts them all: `waiting` (not yet opened: the ramp has not reached
it), `forming` (players queued or the table being created), `playing` (its first command
committed), `finished`, `failed` (an error the bots could not recover from, or a game that ended
without one command of its bots committed: its turns timed out), and at the end
`never started` (opened, never committed a command) and `stalled` (playing, but no command for
`stall_s`). A run with any table that never started, stalled or failed exits non-zero.

Latency is a command's time from sending to its answer, in an HDR histogram (`hdrhistogram`),
corrected for coordinated omission at the bots' pace: a bot that waited for a slow answer did not
send the commands a person would have meanwhile, and the correction counts them.

The work is split over `processes` load-generator processes (so the generator is not what is
measured), each opening its share of tables gradually (`ramp` tables per second over all processes:
grpcio leaves streams opened in one burst unserved). Each process reports a snapshot per second;
the parent merges them into the live view and the report.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import multiprocessing
import queue
import signal
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from multiprocessing.queues import Queue
from typing import Any, Literal

import grpc
from hdrh.histogram import HdrHistogram
from rich.console import Console, Group
from rich.live import Live
from rich.table import Table

from services.matchmaking.queues import QUEUE_MODES

from . import BotTable, SubProtocolStubs, connect
from .matchmaking import MatchmakingClient, Player

#: Latencies are recorded in microseconds, from 1 us to 5 minutes, at 3 significant digits.
HIST_RANGE_US = (1, 300_000_000, 3)
#: How often each generator process sends its snapshot.
SNAPSHOT_S = 1.0
#: Tables left (their seats leave the game, R3) at once when a run stops at its duration.
LEAVE_AT_ONCE = 32
STATUSES = ("waiting", "forming", "playing", "finished", "failed")

Via = Literal["matchmaking", "create"]


@dataclass(frozen=True)
class Targets:
    """The platform's public gRPC addresses (`monopoly run` writes them to its data dir)."""

    table: str
    matchmaking: str = ""
    auction: str = ""
    trade: str = ""
    casino: str = ""

    @property
    def subprotocols(self) -> dict[str, str]:
        return {name: t for name, t in (("auction", self.auction), ("trade", self.trade), ("casino", self.casino)) if t}


@dataclass(frozen=True)
class LoadSpec:
    targets: Targets
    tables: int
    #: Real seconds a bot thinks before each decision (3.0: a person's pace; 0: as fast as answered).
    think_s: float = 3.0
    #: Tables opened per second, over all processes.
    ramp: float = 50.0
    #: Stop after this many seconds (None: when every table has ended).
    duration_s: float | None = None
    via: Via = "matchmaking"
    #: Through matchmaking, each table's players queue as parties (as large as the mode allows), so
    #: they are seated together and every table forms (Duel and Team: parties of two, which R4 may still
    #: mix with players waiting alone); False: each alone, mixed by R4 with whoever
    #: waits, where a player left over when the ramp ends may wait for ever (the last one of six
    #: waiting, say, when a table of five forms).
    parties: bool = True
    mode: str = "classic"
    players: int = 4
    processes: int = 1
    clock_scale: int = 1
    #: A playing table with no command committed for this long is stalled.
    stall_s: float = 60.0
    #: Seconds each command may wait for its answer before the bot gives up on it and re-reads.
    deadline_s: float = 30.0
    seed: int = 1
    #: Tables each process has opening at once (created or queued, their first view not yet on their
    #: watch streams); the ramp waits for one to open rather than pile calls up in a busy service, whose
    #: gRPC core cancels a call it has not taken within 30 s (bench/grpc_accept.py).
    opening: int = 64
    #: A run stopped at its duration: the bots leave the tables still playing with every seat, so the
    #: platform is not left running them by time-outs (False: they play on without their bots).
    leave: bool = True

    def share(self, index: int) -> list[int]:
        """The tables (by number) generator process `index` opens."""
        return list(range(index, self.tables, self.processes))


@dataclass
class Snapshot:
    """One generator process's counts so far (sent to the parent; merged there)."""

    process: int
    statuses: dict[str, int]
    commands: int = 0
    refused: int = 0
    retried: int = 0
    service_polls: int = 0
    errors_by_code: dict[str, int] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)
    never_started: int = 0
    stalled: int = 0
    #: Tables still playing when the run stopped whose bots left the game with every seat they held (`leave`).
    left: int = 0
    histogram: str = ""  # HdrHistogram.encode(), base64 text
    #: Seconds from the process's start to the end of play (its leaving phase not counted).
    play_s: float = 0.0
    done: bool = False


def describe_error(exc: Exception) -> str:
    """One line for a failure: a gRPC error's status code and details (its str() spans lines)."""
    if isinstance(exc, grpc.aio.AioRpcError):
        return f"{exc.code().name} {exc.details()}"
    return f"{type(exc).__name__}: {exc}"


def new_histogram() -> HdrHistogram:
    return HdrHistogram(*HIST_RANGE_US)


class Generator:
    """One process's share of the tables: opens them on the ramp, plays them, counts everything."""

    def __init__(self, spec: LoadSpec, index: int) -> None:
        self.spec = spec
        self.index = index
        self.numbers = spec.share(index)
        self.status: dict[int, str] = dict.fromkeys(self.numbers, "waiting")
        #: Each table number's drivers: one, or one per table matchmaking spread the group over (R4).
        self.games: dict[int, list[BotTable]] = {}
        self.last_commit: dict[int, float] = {}
        self.failures: list[str] = []
        self.histogram = new_histogram()
        self._drained: dict[int, int] = {}  # by id() of a driver: latencies already in the histogram
        self._committed: set[int] = set()  # tables with a command committed since the last `_drain`
        self._unanswered: set[int] = set()  # tables with a command refused or unanswered since then
        #: Tables that were silent (playing, nothing committed) for over `stall_s` at some point.
        self.stalled: set[int] = set()
        self._stall_checked = 0.0
        #: Answers other than OK of calls made for tables that then failed to form (no driver kept).
        self.forming_codes: Counter[str] = Counter()
        self.play_s = 0.0
        self.tasks: list[asyncio.Task[None]] = []
        self.opening = asyncio.Semaphore(spec.opening)

    async def run(self, send: Queue[Snapshot] | None, stop: Any = None) -> Snapshot:
        """Open, play and count this process's tables until they end, the duration is up or `stop`
        (a multiprocessing Event: the parent was interrupted) is set; then leave the tables still on."""
        spec = self.spec
        self.channel, self.stub = connect(spec.targets.table)
        self.services = SubProtocolStubs.connect(spec.targets.subprotocols)
        self.mm = MatchmakingClient(spec.targets.matchmaking) if spec.via == "matchmaking" else None
        loop = asyncio.get_running_loop()
        started = loop.time()
        reporter = asyncio.create_task(self._report(send))
        try:
            interval = spec.processes / spec.ramp if spec.ramp > 0 else 0.0
            opener = asyncio.create_task(self._open_all(interval))
            deadline = None if spec.duration_s is None else started + spec.duration_s
            while not self._all_ended():
                if deadline is not None and loop.time() >= deadline:
                    break
                if stop is not None and stop.is_set():
                    break
                await asyncio.sleep(0.2)
                self._drain()
            opener.cancel()
            self._drain()
            self.play_s = loop.time() - started
            snapshot = self.snapshot(final=True)
        finally:
            reporter.cancel()
            for task in self.tasks:
                task.cancel()
            await asyncio.gather(*self.tasks, reporter, return_exceptions=True)
        try:
            if spec.leave:
                snapshot.left, problems = await self._leave()
                snapshot.failures += problems
        finally:
            if self.mm is not None:
                await self.mm.close()
            await self.services.close()
            await self.channel.close()
        return snapshot

    async def _leave(self) -> tuple[int, list[str]]:
        """Surrender the seats of the tables still playing (a run stopped at its duration), a few
        tables at a time: how many ended so, and what could not be left."""
        playing = [(n, g) for n, s in self.status.items() if s in ("playing", "forming") for g in self.games.get(n, [])]
        gate = asyncio.Semaphore(LEAVE_AT_ONCE)
        problems: list[str] = []

        async def leave(number: int, game: BotTable) -> int | None:
            async with gate:
                try:
                    return number if await game.resign() else None
                except grpc.aio.AioRpcError as exc:
                    problems.append(f"table #{number}: not left at the end: {exc.code().name} {exc.details()}")
                    return None

        ended = await asyncio.gather(*(leave(n, g) for n, g in playing))
        return len({n for n in ended if n is not None}), problems

    def _all_ended(self) -> bool:
        return all(s in ("finished", "failed") for s in self.status.values())

    async def _open_all(self, interval: float) -> None:
        loop = asyncio.get_running_loop()
        first = loop.time()
        for k, number in enumerate(self.numbers):
            wait = first + k * interval - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            await self.opening.acquire()  # released by the table once it is open (or has ended)
            self.status[number] = "forming"
            self.tasks.append(asyncio.create_task(self._table(number)))

    async def _table(self, number: int) -> None:
        opening = True
        try:
            games = await self._form(number)
            self.games[number] = games
            play: asyncio.Future[Any] = asyncio.gather(*(g.play() for g in games))
            opened: asyncio.Future[Any] = asyncio.gather(*(g.opened.wait() for g in games))
            try:
                # The slot is held until every driver has its first view: the service took the table's
                # calls. Not until a first commit, which a bot's think time puts seconds later.
                await asyncio.wait([play, opened], return_when=asyncio.FIRST_COMPLETED)
                self.opening.release()
                opening = False
                await play
            except asyncio.CancelledError:
                play.cancel()
                with contextlib.suppress(Exception, asyncio.CancelledError):
                    await play  # its drivers' cleanup done, its outcome retrieved (none left unseen)
                raise
            finally:
                opened.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await opened
            self._drain()
            if not any(g.commands for g in games):
                # The game ended, but not by our bots: it did not play (its turns timed out meanwhile).
                self.status[number] = "failed"
                self.failures.append(f"table #{number}: {ended_unplayed(games, self.spec.think_s)}")
                return
            self.status[number] = "finished"
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            stage = self.status[number]  # forming or playing: where it failed
            self.status[number] = "failed"
            if isinstance(exc, grpc.aio.AioRpcError) and number not in self.games:
                self.forming_codes[f"forming {exc.code().name}"] += 1  # no driver kept to count it
            self.failures.append(f"table #{number}: while {stage}: {describe_error(exc)}")
        finally:
            if opening:
                self.opening.release()

    def _driver(self, number: int) -> BotTable:
        spec = self.spec
        return BotTable(
            self.stub,
            mode=spec.mode,
            players=spec.players,
            seed=spec.seed + number,
            clock_scale=spec.clock_scale,
            think_s=spec.think_s,
            services=self.services,
            deadline_s=spec.deadline_s,
            on_commit=lambda _: self._committed.add(number),
            on_failed_command=lambda _: self._unanswered.add(number),
        )

    async def _form(self, number: int) -> list[BotTable]:
        """The table's drivers: CreateTable and JoinTable, or the group queued until every player is seated.

        Matchmaking may seat a group at more than one table (R4 fills a table with a player waiting
        from another group): then each of those tables gets a driver for this group's seats there,
        beside the driver of the group that holds its other seats.
        """
        spec = self.spec
        if self.mm is None:
            game = self._driver(number)
            await game.create()
            return [game]
        tag = f"load{spec.seed}-{self.index}-{number}"
        players = [await self.mm.register(f"{tag}-{i}") for i in range(spec.players)]
        wait_s = max(60.0, spec.stall_s)
        try:
            tickets = await self.mm.queue_groups_and_wait(self._parties(players), spec.mode, timeout=wait_s)
        except TimeoutError:
            await self._unqueue(players)
            raise TimeoutError(f"matchmaking did not seat its {spec.players} players within {wait_s:g} s") from None
        except asyncio.CancelledError:  # the run stopped while they waited
            await self._unqueue(players)
            raise
        games: dict[str, BotTable] = {}
        for ticket in tickets:
            game = games.setdefault(ticket.table_id, self._driver(number))
            game.table_id = ticket.table_id
            game.tokens[ticket.seat] = ticket.seat_token
        return list(games.values())

    def _parties(self, players: list[Player]) -> list[list[Player]]:
        """The table's players as the parties they queue in (R4: a party at most the mode's size)."""
        if not self.spec.parties:
            return [[p] for p in players]
        most = QUEUE_MODES[self.spec.mode].max_party
        return [players[i : i + most] for i in range(0, len(players), most)]

    async def _unqueue(self, players: list[Player]) -> None:
        """Take players whose wait ended unseated out of the queue, so matchmaking does not seat them
        later at a table no bot of theirs plays; one seated meanwhile leaves that table (R3)."""
        assert self.mm is not None
        for player in players:
            try:
                status = await self.mm.cancel(player)
                if status.status != "matched" or not status.match.table_id:
                    continue
                game = self._driver(-1)
                game.table_id = status.match.table_id
                game.tokens[status.match.seat] = status.match.seat_token
                await game.resign(patience_s=0)
            except grpc.aio.AioRpcError as exc:
                self.forming_codes[f"unqueue {exc.code().name}"] += 1
                self.failures.append(f"{player.display_name}: not taken out of the queue: {describe_error(exc)}")

    def _drain(self) -> None:
        """Move new latencies into the histogram; note which tables committed since last time."""
        now = time.monotonic()
        corrected = int(self.spec.think_s * 1_000_000)
        committed, self._committed = self._committed, set()  # only those: thousands of tables wait between moves
        unanswered, self._unanswered = self._unanswered, set()
        for number in committed | unanswered:
            games = self.games.get(number)
            if games is None:  # not kept yet (a driver commits only once it plays): next time
                (self._committed if number in committed else self._unanswered).add(number)
                continue
            for game in games:
                new = game.latencies[self._drained.get(id(game), 0) :]
                self._drained[id(game)] = len(game.latencies)
                for seconds in new:
                    us = max(1, int(seconds * 1_000_000))
                    if corrected:
                        self.histogram.record_corrected_value(us, corrected)
                    else:
                        self.histogram.record_value(us)
            if number not in committed:
                continue
            self.last_commit[number] = now
            if self.status[number] == "forming":
                self.status[number] = "playing"
        self._check_stalls(now)

    def _check_stalls(self, now: float, force: bool = False) -> None:
        """Note every playing table silent for over `stall_s` (once a second): a table that stalled and
        then played on still stalled, and counts so at the end."""
        if now - self._stall_checked < 1.0 and not force:
            return
        self._stall_checked = now
        limit = self.spec.stall_s
        for n, s in self.status.items():
            if s == "playing" and now - self.last_commit.get(n, now) > limit:
                self.stalled.add(n)

    def snapshot(self, final: bool = False) -> Snapshot:
        now = time.monotonic()
        self._check_stalls(now, force=final)
        codes: Counter[str] = Counter(self.forming_codes)
        drivers = [g for games in self.games.values() for g in games]
        for game in drivers:
            codes.update(game.status_codes)
            codes.update(game.other_codes)
        never = 0
        failures = list(self.failures)
        if final:
            # which tables, for whoever reads the JSON report (a count alone names none)
            waiting = [(n, s) for n, s in sorted(self.status.items()) if s in ("forming", "waiting")]
            never = len(waiting)
            failures += [f"table #{n}: never started (still {s})" for n, s in waiting]
            for n in sorted(self.stalled):
                ids = ", ".join(g.table_id for g in self.games.get(n, []) if g.table_id)
                failures.append(
                    f"table #{n}{f' ({ids})' if ids else ''}: stalled (no command for over {self.spec.stall_s:g} s)"
                )
        return Snapshot(
            process=self.index,
            statuses=dict(Counter(self.status.values())),
            commands=sum(g.commands for g in drivers),
            refused=sum(g.refused for g in drivers),
            retried=sum(g.unavailable for g in drivers),
            service_polls=sum(g.service_polls for g in drivers),
            errors_by_code=dict(codes),
            failures=failures,
            never_started=never,
            stalled=len(self.stalled),
            histogram=base64.b64encode(self.histogram.encode()).decode() if self.histogram.get_total_count() else "",
            play_s=self.play_s,
            done=final,
        )

    async def _report(self, send: Queue[Snapshot] | None) -> None:
        if send is None:
            return
        while True:
            await asyncio.sleep(SNAPSHOT_S)
            self._drain()
            send.put(self.snapshot())


def ended_unplayed(games: list[BotTable], think_s: float) -> str:
    """Why a table that ended without one command of its bots committed counts as failed."""
    ids = ", ".join(g.table_id for g in games)
    refused = sum(g.refused for g in games)
    codes = Counter[str]()
    for g in games:
        codes.update(g.status_codes)
    answers = f"; answers: {', '.join(f'{c} {n}' for c, n in sorted(codes.items()))}" if codes else ""
    state = games[0].state if games else None
    scale = max((g.table_clock_scale for g in games), default=0) or 1
    if state is None:
        why = "no state of the table was ever seen"
    else:
        real_s = state.config.clock.turn_seconds / scale
        why = (
            f"its turns timed out (E2: three missed turns bankrupt a player); a turn is "
            f"{state.config.clock.turn_seconds} game s, at clock scale {scale} {real_s:.2f} real s"
        )
        if real_s <= think_s:
            why += f", less than the bots' --think {think_s:g} s (run the platform at a lower clock scale)"
    return f"table {ids} ended without one command of its bots committed ({refused} refused{answers}): {why}"


def _generator_main(spec: LoadSpec, index: int, send: Queue[Snapshot], stop: Any = None) -> None:
    """A generator process: its share of the tables, its final snapshot last. Ctrl-C reaches the
    whole process group: the parent alone handles it (it sets `stop`, and this process winds down
    as at the end of `--duration`)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        final = asyncio.run(Generator(spec, index).run(send, stop))
    except BaseException as exc:  # the parent must hear of it, whatever it was
        final = Snapshot(index, {"failed": len(spec.share(index))}, failures=[f"generator {index}: {exc!r}"])
        final.done = True
    send.put(final)


@dataclass
class Report:
    """The run's figures (what `--json` writes)."""

    measured: str
    tables: int
    processes: int
    duration_s: float
    statuses: dict[str, int]
    never_started: int
    stalled: int
    #: Tables still playing at the end that the bots left (`LoadSpec.leave`).
    left: int
    failed: int
    commands: int
    commands_per_s: float
    refused: int
    retried: int
    #: Reads of the auction or casino service that had not caught up with the table yet (the bots wait
    #: ever longer between them): how far the services lag their tables under this load.
    service_polls: int
    errors_by_code: dict[str, int]
    latency_ms: dict[str, float]
    latency_count: int
    failures: list[str]
    #: Stopped by Ctrl-C before its end: its figures cover what ran until then.
    interrupted: bool = False

    @property
    def ok(self) -> bool:
        return not (self.never_started or self.stalled or self.failed or self.interrupted)

    def to_json(self) -> str:
        return json.dumps({**asdict(self), "ok": self.ok}, indent=2)


PERCENTILES = (50.0, 90.0, 99.0, 99.9, 100.0)


def merge(snapshots: dict[int, Snapshot]) -> tuple[Counter[str], HdrHistogram, Snapshot]:
    statuses: Counter[str] = Counter()
    total = Snapshot(-1, {})
    hist = new_histogram()
    codes: Counter[str] = Counter()
    for s in snapshots.values():
        statuses.update(s.statuses)
        total.commands += s.commands
        total.refused += s.refused
        total.retried += s.retried
        total.service_polls += s.service_polls
        total.never_started += s.never_started
        total.stalled += s.stalled
        total.left += s.left
        total.failures.extend(s.failures)
        codes.update(s.errors_by_code)
        if s.histogram:
            hist.add(HdrHistogram.decode(base64.b64decode(s.histogram)))
    total.errors_by_code = dict(codes)
    return statuses, hist, total


def percentiles_ms(hist: HdrHistogram) -> dict[str, float]:
    if not hist.get_total_count():
        return {}
    return {f"p{p:g}": hist.get_value_at_percentile(p) / 1000 for p in PERCENTILES}


def describe(spec: LoadSpec) -> str:
    pace = f"{spec.think_s:g} s per decision" if spec.think_s else "as fast as answered"
    if spec.via == "create":
        how = "created with CreateTable"
    else:
        how = f"queued through matchmaking {'in parties' if spec.parties else 'one by one'}"
    until = f"for {spec.duration_s:g} s" if spec.duration_s else "until every game ended"
    return (
        f"{spec.tables} {spec.mode} tables of {spec.players} bots ({how}), {pace}, opened at {spec.ramp:g} tables/s "
        f"by {spec.processes} process(es), {until}; latency: a table command from sent to answered "
        f"(HDR histogram{', corrected for coordinated omission' if spec.think_s else ''})"
    )


def view(spec: LoadSpec, snapshots: dict[int, Snapshot], elapsed: float, rate: float) -> Group:
    statuses, hist, total = merge(snapshots)
    counts = Table(title=f"monopoly load: {elapsed:.0f} s", expand=False)
    for col in (*STATUSES, "commands/s", "p50 ms", "p99 ms", "retried", "errors"):
        counts.add_column(col, justify="right")
    # Tables of processes not yet reporting are still waiting.
    reported = sum(statuses.values())
    waiting = statuses.get("waiting", 0) + spec.tables - reported
    pct = percentiles_ms(hist)
    counts.add_row(
        str(waiting),
        *(str(statuses.get(s, 0)) for s in STATUSES[1:]),
        f"{rate:,.0f}",
        f"{pct.get('p50', 0):.1f}",
        f"{pct.get('p99', 0):.1f}",
        str(total.retried),
        str(sum(total.errors_by_code.values())),
    )
    return Group(counts)


def _follow(
    spec: LoadSpec, procs: list[Any], inbox: Queue[Snapshot], started: float, console: Console
) -> dict[int, Snapshot]:
    """The generators' snapshots until each sent its last, shown live; a process that died without its
    final snapshot counts all its tables failed."""
    snapshots: dict[int, Snapshot] = {}
    last_commands, last_t, rate = 0, started, 0.0
    with _live(console, spec) as live:
        while not (len(snapshots) == spec.processes and all(s.done for s in snapshots.values())):
            try:
                s = inbox.get(timeout=0.5)
                snapshots[s.process] = s
            except queue.Empty:
                if not any(p.is_alive() for p in procs) and inbox.empty():
                    for i, p in enumerate(procs):  # a process that died without its final snapshot
                        if i not in snapshots or not snapshots[i].done:
                            snapshots[i] = Snapshot(
                                i, {"failed": len(spec.share(i))}, failures=[f"generator {i} exited {p.exitcode}"]
                            )
                            snapshots[i].done = True
            now = time.monotonic()
            if now - last_t >= 1.0:
                commands = sum(s.commands for s in snapshots.values())
                rate = (commands - last_commands) / (now - last_t)
                last_commands, last_t = commands, now
            if live is not None:
                live.update(view(spec, snapshots, now - started, rate))
    return snapshots


@contextlib.contextmanager
def _interruptible(stop: Any, procs: list[Any], console: Console) -> Iterator[None]:
    """Ctrl-C once: `stop` is set, the generators wind down as at `--duration` (their bots leave the
    tables) and send their reports; twice: they are stopped at once and the run ends unreported."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupted(signum: int, frame: Any) -> None:
        if stop.is_set():
            for p in procs:
                p.terminate()
            raise KeyboardInterrupt
        stop.set()
        console.print("interrupted: the bots leave their tables, then the report (Ctrl-C again: at once)")

    previous = signal.signal(signal.SIGINT, interrupted)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def run_load(spec: LoadSpec, console: Console | None = None) -> Report:
    """Run the load over `spec.processes` generator processes with a live view; the merged report."""
    console = console or Console(stderr=True)
    console.print(f"measuring: {describe(spec)}")
    ctx = multiprocessing.get_context("spawn")
    inbox: Queue[Snapshot] = ctx.Queue()
    stop = ctx.Event()
    procs = [
        ctx.Process(target=_generator_main, args=(spec, i, inbox, stop), daemon=True) for i in range(spec.processes)
    ]
    started = time.monotonic()
    for p in procs:
        p.start()
    with _interruptible(stop, procs, console):
        snapshots = _follow(spec, procs, inbox, started, console)
    for p in procs:
        p.join(timeout=10)
    elapsed = time.monotonic() - started
    statuses, hist, total = merge(snapshots)
    played = max((s.play_s for s in snapshots.values()), default=0.0) or elapsed  # the leaving not counted
    return Report(
        measured=describe(spec),
        tables=spec.tables,
        processes=spec.processes,
        duration_s=round(elapsed, 3),
        statuses=dict(statuses),
        never_started=total.never_started,
        stalled=total.stalled,
        left=total.left,
        failed=statuses.get("failed", 0),
        commands=total.commands,
        commands_per_s=round(total.commands / played, 1) if played else 0.0,
        refused=total.refused,
        retried=total.retried,
        service_polls=total.service_polls,
        errors_by_code=total.errors_by_code,
        latency_ms={k: round(v, 3) for k, v in percentiles_ms(hist).items()},
        latency_count=hist.get_total_count(),
        failures=total.failures[:50],
        interrupted=stop.is_set(),
    )


@contextlib.contextmanager
def _live(console: Console, spec: LoadSpec) -> Iterator[Live | None]:
    if not console.is_terminal:  # a log or CI: the report at the end says it all
        yield None
        return
    with Live(view(spec, {}, 0.0, 0.0), console=console, refresh_per_second=2) as live:
        yield live


def print_report(report: Report, console: Console) -> None:
    out = Table(title="monopoly load: report")
    out.add_column("what")
    out.add_column("value", justify="right")
    rows: list[tuple[str, Any]] = [
        ("tables asked for", report.tables),
        ("finished", report.statuses.get("finished", 0)),
        ("still playing at the end", report.statuses.get("playing", 0)),
        ("  of them ended by their bots leaving", report.left),
        ("never started", report.never_started),
        ("stalled (no move for --stall s at some point)", report.stalled),
        ("failed", report.failed),
        ("commands committed", f"{report.commands:,}"),
        ("commands/s", f"{report.commands_per_s:,.1f}"),
        ("refused (the table moved on)", report.refused),
        ("retried (UNAVAILABLE, deadline)", report.retried),
        ("reads of a service behind its table", f"{report.service_polls:,}"),
    ]
    rows += [(f"latency {k}", f"{v:.1f} ms") for k, v in report.latency_ms.items()]
    rows += [(f"status {code}", n) for code, n in sorted(report.errors_by_code.items())]
    for what, value in rows:
        out.add_row(what, str(value))
    console.print(out)
    for line in report.failures[:10]:
        console.print(f"[red]{line}[/]")
    counts = ((report.never_started, "never started"), (report.stalled, "stalled"), (report.failed, "failed"))
    problems = ", ".join(f"{n} {what}" for n, what in counts if n)
    verdict = (
        "every table started and none stalled or failed" if report.ok else f"NOT every table played well: {problems}"
    )
    if report.interrupted:
        verdict = "interrupted (Ctrl-C): the figures cover the run until then"
    console.print(f"{report.measured}\n{verdict}")
