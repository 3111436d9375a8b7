"""`monopoly run` (`make run`): the platform with bot tables at play and a live view, until a signal.

Who drives which seat: players queue through matchmaking, and matchmaking decides the tables (a
classic table takes a fifth player who is waiting at once, so players queued together do not
always sit together). `Seating` therefore gathers the matched tickets by the table each names,
and a table's driver starts once it holds the seat token of every seat our players got there
(bot-filled seats it joins with the platform's service token): one driver per table, exactly
that table's seats.

Tables left unfinished by an earlier run on the same data folder are resumed by the table
service; `run` drives them with bots too (JoinTable with the service token, every seat), shown
as "resumed" in the view, rather than let them play out by time-outs unseen.

SIGINT (Ctrl-C), SIGTERM and SIGHUP stop it in order: the bots, then the services (each
SIGTERM'd and reaped), then NATS, then Postgres (`servicekit.embedded.servers`); the command
returns only after that. While the view runs, every log record, warning and anything written
to stderr goes to `<data_dir>/run.log`, never over the view.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import signal
import sys
import time
import uuid
from collections import Counter, deque
from collections.abc import Coroutine, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import asyncpg
import grpc
from rich.console import Console, Group
from rich.live import Live
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table

from engine import Event, PlayerBankrupt, TableState, TurnTimedOut
from monopoly.v1 import matchmaking_pb2, rating_pb2, rating_pb2_grpc, table_pb2
from servicekit import bus, logs
from servicekit import tls as tlskit
from servicekit.embedded import DataDirBusy, psql_command, servers
from servicekit.settings import TLSSettings
from sim.narrate import describe

from . import BotTable, SubProtocolStubs, bot_service_token, connect
from .botseats import BotSeats
from .channels import platform_channel
from .matchmaking import MatchmakingClient, Player, SeatTicket
from .platform import DEFAULT_METRICS_PORTS, Platform, ServiceProcess, health

log = logging.getLogger("client.run")

#: Names of the players of `run` and `demo`: people (as far as the rating service can tell) whose moves bots
#: choose.
NAMES = ("ada", "bruno", "chen", "dara", "emeka", "farah", "goran", "hana", "ivo", "jun", "kemal", "lea")
#: Bot games last seconds or minutes, not R1's 10 real minutes: `run` and `demo` lower that minimum (and say so).
RATING_MIN_REAL_MINUTES = "0.005"
#: NATS servers `monopoly run --replicas N` (N > 1) starts: a JetStream cluster that outlives one node.
CLUSTER_NODES = 3
#: Real seconds a bot thinks before each move at most: slow enough to watch.
THINK_S = 0.3
#: Game seconds a bot thinks at most: a small share of E1's shortest turn (45 s), so a turn of several
#: decisions ends well inside its timer however fast the clock runs (at scale 60: 0.05 s a decision).
THINK_GAME_S = 3.0
#: Signals that stop the run (Ctrl-C, `kill`, the terminal closing).
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
#: Table rows the view shows at most.
VIEW_ROWS = 12


class Seating:
    """Matched seat tickets gathered by the table matchmaking seated them at.

    `add` returns a table's tickets once it holds one for every seat our players have there
    (by the match's own seat list), else None; each table is handed out once.
    """

    def __init__(self) -> None:
        #: The players this run queued (only their seats are ours to drive).
        self.ours: set[str] = set()
        self._tables: dict[str, dict[int, SeatTicket]] = {}

    @property
    def partial(self) -> int:
        """Tables formed whose tickets have not all arrived yet."""
        return len(self._tables)

    def add(self, ticket: SeatTicket) -> list[SeatTicket] | None:
        seats = self._tables.setdefault(ticket.table_id, {})
        seats[ticket.seat] = ticket
        expected = {s.seat for s in ticket.match.seats if s.player_id in self.ours}
        if not expected <= set(seats):
            return None
        del self._tables[ticket.table_id]
        return [seats[s] for s in sorted(seats)]


@dataclass
class Driven:
    """A table this run's bots drive."""

    bot: BotTable
    task: asyncio.Task[TableState]
    resumed: bool


@dataclass
class Stats:
    """What the view counts, over the run."""

    finished: int = 0
    failed: int = 0
    timeouts: int = 0  # E2 TurnTimedOut events
    timeout_bankruptcies: int = 0  # E2: three missed turns in a row
    ends: Counter[str] = field(default_factory=Counter)  # finished tables by GameEnded reason
    errors: list[str] = field(default_factory=list)  # unhandled errors the loop saw


@contextlib.contextmanager
def stop_on_signals(stop: asyncio.Event) -> Iterator[None]:
    """SIGINT, SIGTERM and SIGHUP set `stop` (instead of killing the process mid-way) while the block runs."""
    loop = asyncio.get_running_loop()
    installed = []
    for sig in STOP_SIGNALS:
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(sig, _stop_by, sig, stop)
            installed.append(sig)
    try:
        yield
    finally:
        for sig in installed:
            loop.remove_signal_handler(sig)


def _stop_by(sig: signal.Signals, stop: asyncio.Event) -> None:
    log.info("%s: stopping", sig.name)
    stop.set()


@contextlib.contextmanager
def logging_to(path: Path, stats: Stats) -> Iterator[TextIO]:
    """Log records (INFO and up), warnings, asyncio's unhandled task errors and whatever is written to
    stderr (fd 2, the C libraries' included) go to `path` while the block runs."""
    path.parent.mkdir(parents=True, exist_ok=True)
    out = open(path, "a", buffering=1)  # noqa: SIM115 - closed below
    handler = logging.StreamHandler(out)
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    chatty = logging.getLogger("pgserver")  # every command line it runs, at INFO
    chatty_level = chatty.level
    chatty.setLevel(logging.WARNING)
    logging.captureWarnings(True)
    loop = asyncio.get_running_loop()
    previous = loop.get_exception_handler()

    def unhandled(_loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        exc = context.get("exception")
        stats.errors.append(f"{context.get('message', 'error')}: {exc!r}")
        log.error("unhandled: %s", context.get("message"), exc_info=exc)

    loop.set_exception_handler(unhandled)
    sys.stderr.flush()
    saved = os.dup(2)
    os.dup2(out.fileno(), 2)
    try:
        yield out
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)
        loop.set_exception_handler(previous)
        logging.captureWarnings(False)
        root.removeHandler(handler)
        root.setLevel(level)
        chatty.setLevel(chatty_level)
        out.close()


async def until(work: Coroutine[Any, Any, Any], stop: asyncio.Event) -> bool:
    """Run `work` unless `stop` is set first (then cancel it); True if it completed."""
    task = asyncio.ensure_future(work)
    stopping = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait({task, stopping}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopping.cancel()
    if task.done():
        task.result()  # its error, if any
        return True
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    return False


async def unfinished_tables(database_url: str) -> list[tuple[str, int]]:
    """(table_id, players) of every table the table service holds unfinished (it resumed them)."""
    conn = await asyncpg.connect(database_url)
    try:
        rows = await conn.fetch(
            "SELECT table_id, jsonb_array_length(players) AS players FROM tables WHERE NOT finished ORDER BY created_at"
        )
    except asyncpg.UndefinedTableError:
        return []  # a fresh database: the table service has not created its tables yet
    finally:
        await conn.close()
    return [(r["table_id"], r["players"]) for r in rows]


async def run(
    data_dir: Path,
    tables: int = 3,
    clock_scale: int = 60,
    duration: float | None = None,
    mode: str = "classic",
    replicas: int = 1,
) -> int:
    """The platform with `tables` bot tables of `mode` at a time and a live view, until a stop signal
    (or `duration` seconds); `replicas` processes of each replicated service, on a 3-node NATS
    cluster when more than one."""
    stop = asyncio.Event()
    stats = Stats()
    log_path = data_dir / "run.log"
    with stop_on_signals(stop):
        try:
            with logging_to(log_path, stats):
                code = await _run(data_dir, tables, clock_scale, duration, mode, stop, stats, replicas)
        except (DataDirBusy, OutOfReach) as exc:  # said here, past the log file stderr goes to meanwhile
            print(f"monopoly run: {exc}", file=sys.stderr)
            return 1
    with contextlib.suppress(OSError):  # the terminal may be gone (SIGHUP)
        extra = f", {stats.failed} drivers failed (see {log_path})" if stats.failed or stats.errors else ""
        print(
            f"stopped: {stats.finished} tables finished{extra}; every service, NATS and Postgres stopped",
            file=sys.stderr,
        )
    return code


async def _run(
    data_dir: Path,
    tables: int,
    clock_scale: int,
    duration: float | None,
    mode: str,
    stop: asyncio.Event,
    stats: Stats,
    replicas: int = 1,
) -> int:
    nodes = CLUSTER_NODES if replicas > 1 else 1
    with servers(data_dir, nats_nodes=nodes) as (nats_url, db_url, bus):
        if stop.is_set():
            return 0
        if problem := await out_of_reach(nats_url, db_url):
            raise OutOfReach(problem)
        platform = Platform(
            nats_url,
            db_url,
            data_dir,
            clock_scale,
            bus=bus,
            replicas=replicas,
            table_replicas=replicas,  # the table's instances share its tables by partition leases
            extra_env={
                "RATING_MIN_REAL_MINUTES": RATING_MIN_REAL_MINUTES,
                # a person who queued with bot_fill waits 5 s for other people, then bots fill the table
                "MATCHMAKING_SMALL_TABLE_WAIT_S": "5",
                # on a cluster every stream keeps a copy per node: a node's loss loses nothing
                **({"NATS_STREAM_REPLICAS": str(nodes)} if nodes > 1 else {}),
            },
            # the default ports 9101-9106 where free; MONOPOLY_METRICS_PORTS=random for random ones (tests,
            # which run beside one another)
            fixed_metrics=os.environ.get("MONOPOLY_METRICS_PORTS", "default") != "random",
        )
        bots = Run(platform, data_dir, tables, clock_scale, mode, stop, stats)
        try:
            # the tables an earlier run left are driven as soon as the table service (which resumed
            # them and runs their timers) answers, while the other services start
            if await until(platform.start(bots.resume), stop):
                await bots.play(duration)
        finally:
            await bots.close()
            await platform.stop()  # the services, each reaped; NATS and Postgres follow
    return 0


class OutOfReach(RuntimeError):
    """Postgres or NATS given by DATABASE_URL / NATS_URL does not answer (`out_of_reach`)."""


#: Takes any password out of a URL shown in a message.
_SCRUB = logs.Scrubber()
#: How long `monopoly run` tries Postgres and NATS given by DATABASE_URL / NATS_URL before saying so.
REACH_TIMEOUT_S = 5.0


async def out_of_reach(nats_url: str, db_url: str) -> str:
    """Why Postgres or NATS cannot be reached (one line, no password), or "" when both answer: an
    address given in DATABASE_URL or NATS_URL that is wrong is said at once, not as a service's
    health check timing out a minute later."""
    try:
        conn = await asyncpg.connect(db_url, timeout=REACH_TIMEOUT_S)
        await conn.close()
    except (OSError, TimeoutError, asyncpg.PostgresError, asyncpg.InterfaceError) as exc:
        return f"Postgres at {_SCRUB(db_url)} is out of reach: {exc or type(exc).__name__}"
    try:
        tls = tlskit.nats_context(TLSSettings.from_env())  # `--tls`: the platform's CA, this process's certificate
        nc, _ = await bus.connect(nats_url, give_up_after_s=REACH_TIMEOUT_S, streams=(), tls=tls)
        await nc.close()
    except bus.NatsOutOfReach as exc:
        if "refused the credentials" in str(exc):
            return ""  # it answers; the services log in as their own users
        return f"NATS at {_SCRUB(nats_url)} is out of reach: {exc}"
    return ""


class Run:
    """The loop of `monopoly run`: keep `tables` tables at play, drive every seat of ours, show it all."""

    def __init__(
        self,
        platform: Platform,
        data_dir: Path,
        tables: int,
        clock_scale: int,
        mode: str,
        stop: asyncio.Event,
        stats: Stats,
    ) -> None:
        self.platform = platform
        self.data_dir = data_dir
        self.tables = tables
        self.clock_scale = clock_scale
        self.mode = mode
        self.stop = stop
        self.stats = stats
        self.seats = 3 if mode == "duel" else 4
        self.channel, self.stub = connect(platform.table_target)
        self.services = SubProtocolStubs.connect({n: platform.target(n) for n in platform.external})
        self.mm = MatchmakingClient(platform.target("matchmaking"))
        self.rating_channel = platform_channel(platform.target("rating"))
        self.rating = rating_pb2_grpc.RatingServiceStub(self.rating_channel)
        self.seating = Seating()
        # People play in a browser (the gateway's lobby); BotSeats plays the seats they leave to bots
        # (bot_fill), except at tables this run drives whole (resumed ones): each seat has one driver.
        self.lobby = platform.lobby_url if "gateway" in platform.processes else ""
        self.bot_seats = BotSeats(self.stub, self.mm.stub, self.services, skip=lambda t: t in self.running)
        self.bot_seats_task: asyncio.Task[None] | None = None
        self.running: dict[str, Driven] = {}
        self.waiting: dict[str, Player] = {}  # queued, not matched yet
        self.batches = 0  # batches of players registering and queueing
        self.tasks: set[asyncio.Task[None]] = set()
        self.latest: deque[str] = deque(maxlen=12)
        self.shown: dict[str, int] = {}  # per table, the last event's seq shown
        self.leaders: list[str] = []
        self.healths: dict[str, str] = {}
        #: Each process's restarts after it died (`supervise`), and those under way.
        self.restarts: Counter[str] = Counter()
        self.restarting: set[str] = set()
        self.instances = ""  # the table service's instances (ListInstances)
        self.rates: deque[tuple[float, int, int]] = deque(maxlen=20)
        self.tag = uuid.uuid4().hex[:4]
        self.n = 0  # tables asked for so far (names and seeds)
        self.closed = False

    # -- seating --------------------------------------------------------------------

    def _spawn(self, work: Coroutine[Any, Any, None], what: str) -> None:
        async def guarded() -> None:
            try:
                await work
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # the platform away for a moment, say: log it, the loop carries on
                self.stats.errors.append(f"{what}: {exc!r}")
                log.exception("%s failed", what)

        task = asyncio.create_task(guarded())
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    def in_flight(self) -> int:
        """Tables running, formed but not yet started, and to come from the players queued."""
        queued = math.ceil(len(self.waiting) / self.seats)
        return len(self.running) + self.seating.partial + queued + self.batches

    def refill(self) -> None:
        while not self.stop.is_set() and self.in_flight() < self.tables:
            self.n += 1
            self.batches += 1
            self._spawn(self.queue_batch(self.n), f"queueing players for table {self.n}")

    async def queue_batch(self, n: int) -> None:
        """A table's worth of players registers and queues; each waits for its own match."""
        try:
            players = [
                await self.mm.register(f"{NAMES[(self.seats * n + i) % len(NAMES)]}-{self.tag}{self.seats * n + i}")
                for i in range(self.seats)
            ]
            self.seating.ours.update(p.player_id for p in players)
            for p in players:
                self.waiting[p.player_id] = p
                await self.mm.enqueue(p, self.mode)
                self._spawn(self.wait_match(p), f"waiting for {p.display_name}'s match")
        finally:
            self.batches -= 1

    async def wait_match(self, player: Player) -> None:
        ticket = await self.mm.wait_match(player, timeout=7 * 24 * 3600.0)  # as long as it takes
        self.waiting.pop(player.player_id, None)
        seated = self.seating.add(ticket)
        if seated is not None:
            await self.drive(ticket.table_id, {t.seat: t.seat_token for t in seated}, ticket.match, resumed=False)

    async def drive(
        self, table_id: str, tokens: dict[int, str], match: matchmaking_pb2.MatchView | None, resumed: bool
    ) -> None:
        """Start the one driver of `table_id` for the seats in `tokens` (and any bot-filled seat of `match`)."""
        if table_id in self.running:
            log.error("table %s already has a driver; not starting a second one", table_id)
            return
        bot = BotTable(
            self.stub,
            mode=self.mode,
            seed=len(self.running) + self.stats.finished + 1,
            clock_scale=self.clock_scale,
            think_s=min(THINK_S, THINK_GAME_S / self.clock_scale),
            on_event=self.remember,
            services=self.services,
            table_id=table_id,
        )
        for seat in [s.seat for s in match.seats if s.is_bot] if match is not None else []:
            joined = await self.stub.JoinTable(
                table_pb2.JoinTableRequest(table_id=table_id, seat=seat, service_token=bot.service_token), timeout=10
            )
            tokens[seat] = joined.seat_token
        bot.tokens = tokens
        self.running[table_id] = Driven(bot, asyncio.create_task(bot.play()), resumed)
        others = sorted({s.seat for s in match.seats} - set(tokens)) if match is not None else []
        log.info(
            "driving table %s seats %s (%s)%s",
            table_id,
            ",".join(map(str, sorted(tokens))),
            "resumed" if resumed else "matched",
            f"; seats {others} are other players'" if others else "",
        )

    async def resume(self) -> None:
        """Drive every table an earlier run left unfinished (the table service resumed them): all seats."""
        try:
            unfinished = await unfinished_tables(self.platform.database_url)
        except (OSError, asyncpg.PostgresError):
            log.exception("the unfinished tables could not be listed; none is driven")
            return
        for table_id, players in unfinished:
            if self.stop.is_set():
                return
            tokens = {}
            try:
                for seat in range(players):
                    request = table_pb2.JoinTableRequest(
                        table_id=table_id, seat=seat, service_token=bot_service_token()
                    )
                    tokens[seat] = (await self.stub.JoinTable(request, timeout=10)).seat_token
            except grpc.aio.AioRpcError as exc:
                log.warning("unfinished table %s not resumed: %s %s", table_id, exc.code().name, exc.details())
                continue
            await self.drive(table_id, tokens, None, resumed=True)

    # -- the view -------------------------------------------------------------------

    def remember(self, g: BotTable, event: Event) -> None:
        state = g.state
        if state is None or state.seq <= self.shown.get(g.table_id, 0):
            return  # shown already
        self.shown[g.table_id] = state.seq
        if isinstance(event, TurnTimedOut):
            self.stats.timeouts += 1
        elif isinstance(event, PlayerBankrupt) and event.cause == "timeout":
            self.stats.timeout_bankruptcies += 1
        if line := describe(state, event):
            self.latest.append(f"{g.table_id}  {escape(line.strip())}")

    def reap(self) -> None:
        """Take the drivers whose table ended (or whose driver failed: logged, with its table)."""
        for table_id, d in list(self.running.items()):
            if not d.task.done():
                continue
            del self.running[table_id]
            if d.task.cancelled():
                continue
            exc = d.task.exception()
            if exc is not None:
                self.stats.failed += 1
                log.error("the driver of table %s failed", table_id, exc_info=exc)
                self.latest.append(f"{table_id}: its driver failed (see run.log)")
                continue
            state = d.task.result()
            self.stats.finished += 1
            self.stats.ends[state.end_reason or "?"] += 1
            winner = state.players[state.winner].name if state.winner >= 0 else "-"
            self.latest.append(
                f"{table_id}: game over after {state.round} rounds ({escape(state.end_reason)}), {escape(winner)} wins"
            )

    async def refresh(self) -> None:
        """The leaderboard and every service's health."""
        with contextlib.suppress(grpc.aio.AioRpcError):
            board = await self.rating.Leaderboard(rating_pb2.LeaderboardRequest(pool="ffa", page_size=8), timeout=5)
            self.leaders[:] = [
                f"{e.rank}. {escape(e.display_name)}  {e.ordinal:.2f} ({e.games} games)" for e in board.entries
            ]
        with contextlib.suppress(grpc.aio.AioRpcError):  # which table-service instance runs how many tables
            listed = await self.stub.ListInstances(table_pb2.ListInstancesRequest(), timeout=5)
            self.instances = "\n".join(
                f"  {escape(i.instance_id)} at {i.address}: {i.partitions}/{listed.partitions} partitions, "
                f"{i.tables} tables" + ("" if i.live else " (not live)")
                for i in listed.instances
            )
        rows = self._rows()
        statuses = await asyncio.gather(*(health(f"127.0.0.1:{process.grpc_port}") for _, process in rows))
        self.healths.update(zip((label for label, _ in rows), statuses, strict=True))

    def supervise(self) -> None:
        """Start again, in the background, a service process that died (a crash, an OOM kill, a `kill -9`):
        as an orchestrator would (compose's restart policy, a Deployment). Its tables, auctions and bets
        resume from Postgres (E2: nobody is timed out for the time it was down). Backoff: 1 s doubling to
        30 s between tries of the same process."""
        if self.stop.is_set():
            return
        for label, process in self._rows():
            proc = process.proc
            if proc is None or proc.returncode is None or label in self.restarting:
                continue
            self.restarting.add(label)
            self._spawn(self._restart(label, process, proc.returncode), f"restarting {label}")

    async def _restart(self, label: str, process: ServiceProcess, code: int) -> None:
        try:
            delay = min(30.0, 2.0 ** self.restarts[label])
            self.stats.errors.append(f"{label} exited with code {code}; starting it again in {delay:.0f} s")
            log.warning(
                "%s exited with code %d; starting it again in %.0f s (see %s)", label, code, delay, process.log_path
            )
            await asyncio.sleep(delay)
            self.restarts[label] += 1
            if not self.stop.is_set():
                await process.start()
                log.warning("%s started again (%d restarts)", label, self.restarts[label])
        finally:
            self.restarting.discard(label)

    def _rows(self) -> list[tuple[str, ServiceProcess]]:
        """Every process of the platform, named by its service (and its replica's number, when several)."""
        rows = []
        for name, found in self.platform.replica_processes.items():
            for i, process in enumerate(found):
                rows.append((name if len(found) == 1 else f"{name}-{i + 1}", process))
        return rows

    def addresses(self) -> Table:
        out = Table(expand=True, box=None)
        for col in ("service", "gRPC", "health", "metrics", "log"):
            out.add_column(col)
        for label, process in self._rows():
            name = label.rsplit("-", 1)[0] if label not in self.platform.processes else label
            index = self.platform.replica_processes[name].index(process)
            port = self.platform.replica_metrics_ports[name][index]
            default = DEFAULT_METRICS_PORTS[name]
            note = f" ({default} was taken)" if index == 0 and port != default else ""
            status = self.healths.get(label, "?")
            colour = "green" if status == "SERVING" else "red"
            if label in self.restarting:
                status, colour = "restarting", "yellow"
            if self.restarts[label]:
                status += f" ({self.restarts[label]} restarts)"
            out.add_row(
                label,
                f"127.0.0.1:{process.grpc_port}",
                f"[{colour}]{status}[/]",
                f"http://127.0.0.1:{port}/metrics{note}",
                escape(str(process.log_path)),
            )
        return out

    def render(self) -> Group:
        view = Table(expand=True)
        for col in ("table", "round", "minute", "phase", "to act", "auction", "trades", "pool", "cash"):
            view.add_column(col)
        rows = [(t, d) for t, d in self.running.items() if d.bot.state is not None]
        for table_id, d in rows[:VIEW_ROWS]:
            s = d.bot.state
            assert s is not None
            view.add_row(
                table_id + (" (resumed)" if d.resumed else ""),
                str(s.round),
                str(s.minute),
                s.phase.value,
                escape(s.players[s.actor].name) if s.actor >= 0 else "-",
                f"{s.config.board.squares[s.auction.square].name}" if s.auction is not None else "-",
                str(d.bot.event_counts["TradeExecuted"]),
                f"${s.jackpot:,}",
                " ".join(f"${p.cash:,}" for p in s.players),
            )
        if len(rows) > VIEW_ROWS:
            view.add_row(f"... and {len(rows) - VIEW_ROWS} more", *[""] * 8)
        now = time.monotonic()
        commands = sum(d.bot.commands for d in self.running.values())
        events = sum(self.shown.values())
        self.rates.append((now, commands, events))
        t0, c0, e0 = self.rates[0]
        span = max(now - t0, 1e-6)
        resumed = sum(d.resumed for d in self.running.values())
        st = self.stats
        ends = ", ".join(f"{n} {why}" for why, n in sorted(st.ends.items())) or "none yet"
        header = (
            f"queue: {len(self.waiting)} players waiting, {self.seating.partial + self.batches} tables forming | "
            f"tables running {len(self.running)} ({resumed} resumed), finished {st.finished} ({ends})"
            + (f", [red]{st.failed} drivers failed[/]" if st.failed else "")
            + f" | {max(0.0, (commands - c0) / span):.0f} commands/s, {max(0.0, (events - e0) / span):.0f} events/s"
            f" | E2 time-outs {st.timeouts} ({st.timeout_bankruptcies} bankruptcies) | Ctrl-C stops"
            + (f"\nplay in a browser: {self.lobby}" if self.lobby else "")
        )
        where = (
            f"NATS {self.platform.nats_url}\nPostgres: {escape(psql_command(self.platform.database_url))}\n"
            f"logs: {escape(str(self.data_dir))}/*.log (this view's own: run.log)"
            + (f"\ntable instances:\n{self.instances}" if self.instances else "")
        )
        return Group(
            Panel(header),
            Panel(Group(self.addresses(), where), title="platform"),
            view,
            Panel("\n".join(self.latest) or "...", title="latest events"),
            Panel("\n".join(self.leaders) or "no rated game yet", title="leaderboard (ffa)"),
        )

    # -- the loop -------------------------------------------------------------------

    async def play(self, duration: float | None) -> None:
        console = Console()
        live = Live(self.render(), console=console, auto_refresh=False, redirect_stdout=False, redirect_stderr=False)
        started = time.monotonic()
        try:
            if self.lobby:
                print(f"lobby: {self.lobby}  (open it in a browser to play against bots)", flush=True)
            if not console.is_terminal:  # the live view only says where things are on a terminal: said here once
                print(
                    f"NATS_URL={self.platform.nats_url}\nDATABASE_URL={self.platform.database_url}\n"
                    f"addresses: {self.platform.targets_path}; logs: {self.data_dir}/*.log",
                    flush=True,
                )
            # the resumed tables (driven during platform.start) are in `running`: BotSeats leaves them alone
            self.bot_seats_task = asyncio.create_task(self.bot_seats.run())
            await self.refresh()
            with contextlib.suppress(OSError):
                live.start(refresh=True)
            ticks = 0
            while not self.stop.is_set():
                self.reap()
                self.refill()
                self.supervise()
                if ticks % 8 == 0:  # every 2 s
                    await self.refresh()
                with contextlib.suppress(OSError):  # a terminal that went away (SIGHUP) shows nothing more
                    live.update(self.render(), refresh=True)
                if duration is not None and time.monotonic() - started > duration:
                    break
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.stop.wait(), 0.25)
                ticks += 1
        finally:
            with contextlib.suppress(OSError):
                live.stop()

    async def close(self) -> None:
        """Stop the bots: queueing, waiting and driving tasks; the players still queued leave the queue
        (a later run would otherwise be seated with them, and nobody would drive their seats)."""
        if self.closed:
            return
        self.closed = True
        self.bot_seats.stop()
        if self.bot_seats_task is not None:
            await asyncio.gather(self.bot_seats_task, return_exceptions=True)
        for task in list(self.tasks):
            task.cancel()
        drivers = [d.task for d in self.running.values()]
        for driver in drivers:
            driver.cancel()
        await asyncio.gather(*self.tasks, *drivers, return_exceptions=True)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(
                asyncio.gather(*(self.mm.cancel(p) for p in self.waiting.values()), return_exceptions=True), 5
            )
        for t, d in self.running.items():
            log.info("table %s left unfinished at round %s", t, d.bot.state.round if d.bot.state else "?")
        await self.mm.close()
        await self.rating_channel.close()
        await self.services.close()
        await self.channel.close()


__all__ = ["Run", "Seating", "run"]
