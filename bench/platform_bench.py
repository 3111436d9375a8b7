"""Platform throughput: the table service and the auction, trade and casino services under bot load.

What is measured, everything on this one machine (servers, services, load):
  echo   a bare grpc.aio echo server, unary (64 calls in flight) and over 64
         bidirectional streams: the ceilings of Python gRPC here, measured in
         the same run for a ratio;
  full   TABLES tables of 4 heuristic bots submitting as fast as the services
         answer: committed commands/s (table commands plus the bids, bets and
         trades the sub-protocol services committed), events/s (counted on
         JetStream), p50/p99 latency of a command (sent to its answer);
         median of RUNS runs;
  human  `monopoly load` (client.load): HUMAN_TABLES tables whose bots think THINK
         s per decision, opened at RAMP tables/s by LOAD_PROCESSES generator
         processes, then WINDOW s of play: latency percentiles (HDR histogram,
         corrected for coordinated omission), the tables that never started,
         stalled or failed (any of them fails the run), the table service's
         CPU per command and resident memory per table; on HUMAN_INSTANCES
         table service processes (default 1), which share the tables by
         partition leases.
With --instances 1,2,3 (INSTANCES=1,2,3), instead of the full and human rows, per count a
platform with that many processes of every service (`Platform(replicas=N, table_replicas=N)`):
  n=N    TABLES tables kept at full speed, WARMUP s, then FULL_WINDOW s measured, RUNS
         times: committed commands/s, p50/p99, the ratio to the first count and to the
         stream echo, the platform's CPU (psutil) per committed command;
  failover (N >= 2, RUNS times) the last table instance SIGKILLed mid-run: for each
         table it held, the time from the kill to its next committed command (median,
         p99, count); a table that failed or did not resume in RESUME_TIMEOUT s fails
         the run.
With --services table the sub-protocols run inside the table (the table-only baseline).
With --transport unary the bots send each command as its own SubmitCommand call instead of
on a Play stream per table (the default).
The load generator is this process; the services and the servers are others.
NATS_URL / DATABASE_URL when set, else the embedded servers (with DATABASE_URL, a new database on its
server per row, dropped after it: an earlier row's tables would be resumed and measured with the next).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import gc
import itertools
import math
import os
import resource
import statistics
import sys
import tempfile
import time
import traceback
import urllib.parse
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import asyncpg
import grpc
import nats
import psutil
from rich.console import Console

from client import BotTable, SubProtocolStubs, connect, platform_channel
from client.load import LoadSpec, Report, Targets, run_load
from client.platform import Platform
from monopoly.v1 import table_pb2, table_pb2_grpc
from servicekit import natsauth
from servicekit.bus import TABLE_EVENTS
from servicekit.embedded import free_port, servers

ECHO = "/bench.Echo/Call"
ECHO_STREAM = "/bench.Echo/Chat"
TRANSPORTS = {
    "stream": "on one TableService.Play stream per table",
    "unary": "as one SubmitCommand call each",
}


async def echo_server(port: int) -> grpc.aio.Server:
    async def call(request: bytes, context: grpc.aio.ServicerContext) -> bytes:
        return request

    async def chat(requests: AsyncIterator[bytes], context: grpc.aio.ServicerContext) -> AsyncIterator[bytes]:
        async for request in requests:
            yield request

    handler = grpc.method_handlers_generic_handler(
        "bench.Echo",
        {"Call": grpc.unary_unary_rpc_method_handler(call), "Chat": grpc.stream_stream_rpc_method_handler(chat)},
    )
    server = grpc.aio.server()
    server.add_generic_rpc_handlers((handler,))
    server.add_insecure_port(f"127.0.0.1:{port}")
    await server.start()
    return server


def _run_echo_server(port: int) -> None:
    async def main() -> None:
        server = await echo_server(port)
        await server.wait_for_termination()

    asyncio.run(main())


async def measure_echo(stream: bool = False, seconds: float = 5.0, in_flight: int = 64) -> float:
    """Calls/s of a bare unary echo, or exchanges/s of a bare bidirectional-stream echo (one
    stream per worker, a message out and back at a time); server in its own process."""
    import multiprocessing

    port = free_port()
    proc = multiprocessing.get_context("spawn").Process(target=_run_echo_server, args=(port,), daemon=True)
    proc.start()
    try:
        async with platform_channel(f"127.0.0.1:{port}") as channel:
            call = channel.unary_unary(ECHO)
            chat = channel.stream_stream(ECHO_STREAM)
            await channel.channel_ready()
            done = 0
            stop = time.perf_counter() + seconds

            async def worker() -> None:
                nonlocal done
                if not stream:
                    while time.perf_counter() < stop:
                        await call(b"x" * 32)
                        done += 1
                    return
                exchange = chat()
                while time.perf_counter() < stop:
                    await exchange.write(b"x" * 32)
                    await exchange.read()
                    done += 1
                await exchange.done_writing()

            started = time.perf_counter()
            await asyncio.gather(*(worker() for _ in range(in_flight)))
            return done / (time.perf_counter() - started)
    finally:
        proc.terminate()


async def stream_events(js: nats.js.JetStreamContext) -> int:
    info = await js.stream_info(TABLE_EVENTS.name)
    return int(info.state.messages)


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p * len(ordered)))] if ordered else 0.0


async def full_speed(
    platform: Platform, js: nats.js.JetStreamContext, tables: int, seed: int, stream: bool
) -> dict[str, float]:
    channel, stub = connect(platform.table_target)
    services = SubProtocolStubs.connect({n: platform.target(n) for n in platform.external})
    games = [BotTable(stub, seed=seed + i, services=services, stream_commands=stream) for i in range(tables)]
    for g in games:
        await g.create()
    before = await stream_events(js)
    started = time.perf_counter()
    states = await asyncio.gather(*(g.play() for g in games))
    elapsed = time.perf_counter() - started
    await asyncio.sleep(1.0)  # the relay publishes what was committed last
    batches = await stream_events(js) - before
    await channel.close()
    await services.close()
    latencies = [x for g in games for x in g.latencies]
    commands = sum(g.commands for g in games)
    service_moves = sum(sum(g.service_moves.values()) for g in games)
    return {
        "commands_per_s": (commands + service_moves) / elapsed,
        "table_commands_per_s": commands / elapsed,
        "service_moves_per_s": service_moves / elapsed,
        "events_per_s": sum(s.seq for s in states) / elapsed,
        "jetstream_msgs_per_s": batches / elapsed,
        "p50_ms": pct(latencies, 0.5) * 1000,
        "p99_ms": pct(latencies, 0.99) * 1000,
    }


def scrape_histogram(port: int, name: str = "table_command_seconds") -> dict[float, float]:
    """Cumulative bucket counts of a histogram on a service's /metrics."""
    import urllib.request

    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    buckets: dict[float, float] = {}
    for line in text.splitlines():
        if line.startswith(f"{name}_bucket"):
            le = line.split('le="')[1].split('"')[0]
            buckets[float("inf") if le == "+Inf" else float(le)] = float(line.rsplit(" ", 1)[1])
    return buckets


def histogram_quantile(before: dict[float, float], after: dict[float, float], q: float) -> float:
    """The upper bound of the bucket holding quantile `q` of what was observed between two scrapes."""
    deltas = sorted((le, after[le] - before.get(le, 0.0)) for le in after)
    total = deltas[-1][1]
    for le, count in deltas:
        if total and count >= q * total:
            return le
    return float("inf")


class CpuByRole:
    """CPU time (user + system) between two readings, by role: each service (its instances together),
    Postgres and NATS when this process started them, the load generators (this process, which runs
    and watches them, and the generator processes it spawned) and any other child. Where the box's cores
    go at human pace, where the table service is only part of it."""

    def __init__(self, platform: Platform) -> None:
        self.services = {
            p.proc.pid: name for name, found in platform.replica_processes.items() for p in found if p.proc is not None
        }
        self.postmaster = embedded_postmaster(platform.database_url)

    def _role(self, proc: psutil.Process) -> str:
        if proc.pid in self.services:
            return self.services[proc.pid]
        name = proc.name()
        if name.startswith("postgres"):
            return "postgres"
        if name.startswith("nats"):
            return "nats"
        if any("multiprocessing" in part for part in proc.cmdline()):
            return "generators"  # `monopoly load --processes`: spawned by this process's multiprocessing
        return "other"  # e.g. the embedded Postgres's watchdog (asleep)

    def read(self) -> dict[tuple[str, int], float]:
        seen: dict[tuple[str, int], float] = {}
        procs = psutil.Process().children(recursive=True)
        if self.postmaster is not None:  # pgserver's Postgres runs detached: not among this process's children
            with contextlib.suppress(psutil.Error):
                procs += [self.postmaster, *self.postmaster.children(recursive=True)]
        for proc in procs:
            with contextlib.suppress(psutil.Error):
                times = proc.cpu_times()
                seen[(self._role(proc), proc.pid)] = times.user + times.system
        usage = resource.getrusage(resource.RUSAGE_SELF)
        seen[("generators", os.getpid())] = usage.ru_utime + usage.ru_stime
        return seen

    @staticmethod
    def since(before: dict[tuple[str, int], float], after: dict[tuple[str, int], float]) -> dict[str, float]:
        """Seconds of CPU per role (a process that came or went meanwhile, a Postgres backend say, is left out)."""
        roles: dict[str, float] = collections.defaultdict(float)
        for (role, pid), seconds in after.items():
            if (role, pid) in before:
                roles[role] += seconds - before[(role, pid)]
        return dict(roles)


def embedded_postmaster(database_url: str) -> psutil.Process | None:
    """The embedded Postgres's postmaster, found by the socket folder (its data folder) in the URL's
    `host=`; None for a server given by DATABASE_URL."""
    host = urllib.parse.parse_qs(urllib.parse.urlsplit(database_url).query).get("host", [""])[0]
    pid_file = Path(host) / "postmaster.pid"
    if not host or not pid_file.is_file():
        return None
    try:
        return psutil.Process(int(pid_file.read_text().split()[0]))
    except (ValueError, IndexError, psutil.Error):
        return None


async def human_pace(
    platform: Platform, tables: int, think: float, window: float, processes: int, ramp: float
) -> tuple[Report, dict[str, float], dict[str, float]]:
    """`monopoly load` (client.load) at a person's pace against the running platform: its report (with
    the tables that never started or stalled), the table service's CPU and memory over the run (all
    its instances together), and the CPU share of a core of every role on the box (`CpuByRole`)."""
    instances = [psutil.Process(p.proc.pid) for p in platform.replica_processes["table"] if p.proc is not None]

    def cpu_s() -> float:
        return sum(sum(i.cpu_times()[:2]) for i in instances)

    def rss_b() -> int:
        return sum(i.memory_info().rss for i in instances)

    rss_before = rss_b()
    spec = LoadSpec(
        targets=Targets(table=platform.table_target, **{n: platform.target(n) for n in platform.external}),
        tables=tables,
        think_s=think,
        ramp=ramp,
        duration_s=tables / ramp + window,  # every table opened, then `window` s of play
        via="create",
        processes=processes,
        seed=10_000,
        leave=False,  # the row's platform is stopped after it: surrendering would only add to what is measured
    )
    roles = CpuByRole(platform)
    cpu0 = cpu_s()
    started = time.perf_counter()
    loading = asyncio.create_task(asyncio.to_thread(run_load, spec, Console(stderr=True)))
    # The roles are measured over the window of play after the ramp (every table open), read again
    # just before the window's end: the generator processes exit at it, and a process gone is not counted.
    opened = tables / ramp + OPENED_GRACE_S
    await asyncio.wait({loading}, timeout=opened)
    window0, window_started, box0 = roles.read(), time.perf_counter(), psutil.cpu_times()
    await asyncio.wait({loading}, timeout=max(0.0, tables / ramp + window - opened - 1.0))
    window1, window_s, box1 = roles.read(), time.perf_counter() - window_started, psutil.cpu_times()
    report = await loading
    elapsed = time.perf_counter() - started
    cpu = cpu_s() - cpu0
    spent = CpuByRole.since(window0, window1)
    by_role = {role: seconds / window_s for role, seconds in spent.items()} if window_s > 1 else {}
    rss = rss_b()
    return (
        report,
        {
            "cpu_share": cpu / elapsed,
            "cpu_ms_per_command": 1000 * cpu / report.commands if report.commands else 0.0,
            "rss_mb": rss / 2**20,
            "kb_per_table": (rss - rss_before) / 1024 / tables,
            **(box_shares(box0, box1) if window_s > 1 else {}),
        },
        by_role,
    )


def box_shares(before: Any, after: Any) -> dict[str, float]:
    """The whole box's CPU time between two `psutil.cpu_times()` by kind, as shares of all its cores:
    what the processes measured by role leave out (the kernel's work for the loopback network, other
    tenants), and the time waited on the disk (iowait) or taken by the hypervisor (steal)."""
    spent = {f: getattr(after, f) - getattr(before, f) for f in after._fields}
    total = sum(spent.values()) or 1.0
    share = {f: spent[f] / total for f in spent}
    return {
        "box_busy": 1.0 - share.get("idle", 0.0) - share.get("iowait", 0.0) - share.get("steal", 0.0),
        "box_iowait": share.get("iowait", 0.0),
        "box_steal": share.get("steal", 0.0),
    }


#: Seconds after the ramp's last table before the window the roles are measured over begins.
OPENED_GRACE_S = 5.0


def describe_roles(by_role: dict[str, float]) -> str:
    """`table 0.52, postgres 0.31, ...`: each role's share of a core, the largest first, and their sum."""
    if not by_role:
        return "not measured (the run ended before its window began)"
    parts = ", ".join(f"{role} {share:.2f}" for role, share in sorted(by_role.items(), key=lambda kv: -kv[1]))
    missing = [r for r in ("postgres", "nats") if r not in by_role]
    unmeasured = f" ({' and '.join(missing)} not found among this run's processes: not measured)" if missing else ""
    return f"{parts}; {sum(by_role.values()):.2f} cores in all{unmeasured}"


def failure_reasons(failures: list[str]) -> collections.Counter[str]:
    """The report's failures ("table #12: why", at most 50 kept) counted by their reason."""
    return collections.Counter(line.split(": ", 1)[-1] for line in failures)


def table_counts(text: str) -> list[int]:
    """`1000,2000` -> [1000, 2000]; `0` -> [] (no human-pace row)."""
    try:
        counts = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError("table counts: integers, comma-separated") from None
    if any(c < 0 for c in counts):
        raise argparse.ArgumentTypeError("table counts: not negative")
    return [c for c in counts if c]


def instance_counts(text: str) -> list[int]:
    """`1,2,3` -> [1, 2, 3]."""
    counts = [int(x) for x in text.split(",") if x.strip()]
    if not counts or min(counts) < 1:
        raise argparse.ArgumentTypeError("instance counts: positive integers, comma-separated")
    return counts


# -- several instances of every service (`--instances`) ------------------------------------------


@dataclass
class Slots:
    """TABLES tables kept playing at full speed: each slot opens a new table when its game ends, so
    the load stays the same through a measured window (a game's end does not thin it out)."""

    stub: table_pb2_grpc.TableServiceStub
    services: SubProtocolStubs
    tables: int
    seed: int
    stream: bool
    #: Every table opened so far (the current one of each slot is `current[slot]`).
    games: list[BotTable] = field(default_factory=list)
    current: dict[int, BotTable] = field(default_factory=dict)
    #: Tables whose play raised an error the bots could not recover from: (table id, error).
    failures: list[tuple[str, str]] = field(default_factory=list)
    failed_ids: set[str] = field(default_factory=set)
    #: Tables that could not be opened (CreateTable, JoinTable): (table id, error).
    open_failures: list[tuple[str, str]] = field(default_factory=list)
    tasks: list[asyncio.Task[None]] = field(default_factory=list)

    def start(self) -> None:
        self.tasks = [asyncio.create_task(self._slot(i)) for i in range(self.tables)]

    async def _slot(self, slot: int) -> None:
        for n in itertools.count():
            game = BotTable(
                self.stub, seed=self.seed + slot * 1000 + n, services=self.services, stream_commands=self.stream
            )
            self.current[slot] = game
            self.games.append(game)
            try:
                await game.create()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # CreateTable or JoinTable refused (the driver does not retry them)
                self.open_failures.append((game.table_id or "(not created)", explain(exc)))
                await asyncio.sleep(1.0)
                continue
            try:
                await game.play()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self.failures.append((game.table_id, explain(exc)))
                self.failed_ids.add(game.table_id)
                await asyncio.sleep(1.0)

    def committed(self) -> int:
        """Commands committed so far: the tables' own and the services' moves (bids, bets, trades)."""
        return sum(g.commands + sum(g.service_moves.values()) for g in self.games)

    def latency_marks(self) -> dict[int, int]:
        return {id(g): len(g.latencies) for g in self.games}

    def latencies_since(self, marks: dict[int, int]) -> list[float]:
        return [x for g in self.games for x in g.latencies[marks.get(id(g), 0) :]]

    async def stop(self) -> None:
        """The slots cancelled (their tables left unfinished: the platform is stopped afterwards)."""
        for task in self.tasks:
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)


def explain(exc: BaseException) -> str:
    """An error in one line: its gRPC code and details, and the last frame of the project's code it
    came through."""
    what = f"{exc.code().name}: {exc.details()}" if isinstance(exc, grpc.aio.AioRpcError) else f"{exc!r}"
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if "/libs/" in f.filename]
    return f"{what} (at {Path(frames[-1].filename).name}:{frames[-1].lineno} {frames[-1].name})" if frames else what


class CpuMeter:
    """CPU time (user + system, psutil) of a set of processes between two readings: the platform's
    services, and separately NATS and Postgres (this process's other descendants; the load generator,
    this process, is in neither)."""

    def __init__(self, services: list[int]) -> None:
        self.services = [psutil.Process(pid) for pid in services]

    def _servers(self) -> list[psutil.Process]:
        ours = {p.pid for p in self.services}
        return [p for p in psutil.Process().children(recursive=True) if p.pid not in ours]

    @staticmethod
    def _cpu(procs: list[psutil.Process]) -> dict[int, float]:
        seen: dict[int, float] = {}
        for p in procs:
            with contextlib.suppress(psutil.Error):
                times = p.cpu_times()
                seen[p.pid] = times.user + times.system
        return seen

    def read(self) -> tuple[dict[int, float], dict[int, float]]:
        return self._cpu(self.services), self._cpu(self._servers())

    @staticmethod
    def since(before: dict[int, float], after: dict[int, float]) -> float:
        """Seconds of CPU between the readings, of the processes in both (a Postgres backend that came
        or went meanwhile is left out)."""
        return sum(after[pid] - before[pid] for pid in after if pid in before)


async def reach_every_instance(channel: grpc.aio.Channel, instances: int, timeout: float = 30.0) -> None:
    """Until calls on `channel` have been answered by each of the table service's instances: a round-robin
    channel sends its first calls to whichever instance it reached first, so the tables opened right away
    would all start on one instance (a table is created on the instance that is asked)."""
    if instances < 2:
        return
    stub = table_pb2_grpc.TableServiceStub(channel)
    seen: set[str] = set()
    deadline = time.perf_counter() + timeout
    while len(seen) < instances:
        if time.perf_counter() > deadline:
            raise RuntimeError(f"only {sorted(seen)} of {instances} table-service instances answered")
        with contextlib.suppress(grpc.aio.AioRpcError):
            seen.add((await stub.ListInstances(table_pb2.ListInstancesRequest(), timeout=5)).answered_by)
        await asyncio.sleep(0.05)


def platform_pids(platform: Platform) -> list[int]:
    return [p.proc.pid for found in platform.replica_processes.values() for p in found if p.proc is not None]


async def sustained(
    platform: Platform, tables: int, seed: int, stream: bool, warmup: float, window: float
) -> dict[str, float]:
    """TABLES tables at full speed (`Slots`); after `warmup` s, `window` s measured: committed
    commands/s, p50/p99 of a command, and the platform's CPU per committed command."""
    channel, stub = connect(platform.table_target)
    services = SubProtocolStubs.connect({n: platform.target(n) for n in platform.external})
    slots = Slots(stub, services, tables, seed, stream)
    meter = CpuMeter(platform_pids(platform))
    await reach_every_instance(channel, len(platform.replica_processes["table"]))
    slots.start()
    try:
        await asyncio.sleep(warmup)
        marks, committed0 = slots.latency_marks(), slots.committed()
        svc0, srv0 = meter.read()
        generator0 = time.process_time()
        started = time.perf_counter()
        await asyncio.sleep(window)
        elapsed = time.perf_counter() - started
        committed = slots.committed() - committed0
        svc1, srv1 = meter.read()
        generator = time.process_time() - generator0
        latencies = slots.latencies_since(marks)
    finally:
        await slots.stop()
        await channel.close()
        await services.close()
    cpu_services, cpu_servers = CpuMeter.since(svc0, svc1), CpuMeter.since(srv0, srv1)
    per = 1000 / committed if committed else 0.0
    return {
        "commands_per_s": committed / elapsed,
        "p50_ms": pct(latencies, 0.5) * 1000,
        "p99_ms": pct(latencies, 0.99) * 1000,
        "cpu_ms_per_command": cpu_services * per,
        "cpu_ms_per_command_all": (cpu_services + cpu_servers) * per,
        "cpu_cores": (cpu_services + cpu_servers) / elapsed,
        "generator_cores": generator / elapsed,
        "failed": float(len(slots.failures) + len(slots.open_failures)),
    }


async def owners(database_url: str, table_ids: list[str]) -> dict[str, str]:
    """The instance holding the lease of each unfinished table of `table_ids` now
    (services/table/leases.py: partition_leases, tables.partition)."""
    conn = await asyncpg.connect(database_url)
    try:
        rows = await conn.fetch(
            "SELECT t.table_id, l.owner FROM tables t JOIN partition_leases l ON l.partition = t.partition "
            "WHERE NOT t.finished AND t.table_id = ANY($1::text[])",
            table_ids,
        )
    finally:
        await conn.close()
    return {r["table_id"]: r["owner"] or "" for r in rows}


async def wait_balanced(database_url: str, instance_ids: list[str], timeout: float = 120.0) -> float:
    """Seconds until every partition is leased and each instance holds its share (at least what is
    left when the others hold ceil(P / n) each: services/table/leases.py)."""
    started = time.perf_counter()
    conn = await asyncpg.connect(database_url)
    try:
        while True:
            partitions = int(await conn.fetchval("SELECT partitions FROM table_partitioning"))
            rows = await conn.fetch("SELECT owner, count(*) AS n FROM partition_leases GROUP BY owner")
            held = {r["owner"]: int(r["n"]) for r in rows}
            floor = partitions - (len(instance_ids) - 1) * math.ceil(partitions / len(instance_ids))
            if None not in held and all(held.get(i, 0) >= floor for i in instance_ids):
                return time.perf_counter() - started
            if time.perf_counter() - started > timeout:
                raise RuntimeError(f"partitions not rebalanced within {timeout:.0f} s: {held}")
            await asyncio.sleep(0.2)
    finally:
        await conn.close()


@dataclass
class Failover:
    victim: str
    #: The playing tables each instance ran at the kill.
    spread: dict[str, int]
    affected: int
    #: Seconds from the SIGKILL to each affected table's next committed command.
    pauses: list[float]
    #: Affected tables whose play failed, and those with no command committed within the timeout.
    failed: dict[str, str]
    never_resumed: list[str]
    #: Tables not on the killed instance that failed meanwhile.
    others_failed: list[tuple[str, str]]
    #: Tables opened after the kill whose CreateTable or JoinTable failed.
    open_failed: list[tuple[str, str]]

    @property
    def ok(self) -> bool:
        return not (self.failed or self.never_resumed or self.others_failed)


async def failover(
    platform: Platform, database_url: str, tables: int, seed: int, stream: bool, warmup: float, timeout: float
) -> Failover:
    """TABLES tables at full speed; after `warmup` s, SIGKILL the last table-service instance and time,
    for each table it ran, the pause from the kill to that table's next committed command (the bots
    reach the new owner through the redirects), up to `timeout` s."""
    victim = platform.replica_processes["table"][-1]
    assert victim.proc is not None
    victim_id = victim.env["TABLE_INSTANCE_ID"]
    channel, stub = connect(platform.table_target)
    services = SubProtocolStubs.connect({n: platform.target(n) for n in platform.external})
    slots = Slots(stub, services, tables, seed, stream)
    await reach_every_instance(channel, sum(1 for p in platform.replica_processes["table"] if p.proc))
    slots.start()
    try:
        await asyncio.sleep(warmup)
        playing = {g.table_id: g for g in slots.current.values() if g.state is not None and not g.state.finished}
        owner = await owners(database_url, list(playing))
        spread = dict(sorted(collections.Counter(owner.values()).items()))
        games = {tid: playing[tid] for tid, at in owner.items() if at == victim_id}
        killed = time.perf_counter()
        victim.proc.kill()
        await victim.proc.wait()
        base = {tid: g.commands for tid, g in games.items()}  # what the dead instance answered is in
        pauses: dict[str, float] = {}
        failed: dict[str, str] = {}
        while len(pauses) + len(failed) < len(games) and time.perf_counter() - killed < timeout:
            await asyncio.sleep(0.005)
            now = time.perf_counter()
            for tid, g in games.items():
                if tid in pauses or tid in failed:
                    continue
                if g.commands > base[tid] or (g.state is not None and g.state.finished):
                    pauses[tid] = now - killed
                elif tid in slots.failed_ids:
                    failed[tid] = next(why for t, why in slots.failures if t == tid)
        never = [tid for tid in games if tid not in pauses and tid not in failed]
        others = [(tid, why) for tid, why in slots.failures if tid not in games]
    finally:
        await slots.stop()
        await channel.close()
        await services.close()
    return Failover(victim_id, spread, len(games), sorted(pauses.values()), failed, never, others, slots.open_failures)


def describe_pauses(pauses: list[float]) -> str:
    if not pauses:
        return "none resumed"
    return f"median {statistics.median(pauses) * 1000:,.0f} ms, p99 {pct(pauses, 0.99) * 1000:,.0f} ms"


async def bench_instances(args: argparse.Namespace, counts: list[int], echo_stream: float) -> int:
    """Per instance count: a platform with that many processes of every service, RUNS measured
    windows at full speed, then (two or more) one table-service instance SIGKILLed mid-run."""
    names = ("table", "auction", "trade", "casino") if args.services == "all" else ("table",)
    stream = args.transport == "stream"
    print(
        f"instances  {', '.join(map(str, counts))} of every service ({', '.join(names)}; the table's instances "
        f"share the tables by partition leases; a 3-node NATS cluster from 2 on): {args.tables} tables kept "
        f"at full speed, commands sent {TRANSPORTS[args.transport]}; per run {args.warmup:g} s of warm-up, "
        f"then {args.full_window:g} s measured; medians of {args.runs} runs",
        flush=True,
    )
    print(
        f"instances  this machine has {psutil.cpu_count()} cores (load average now "
        f"{', '.join(f'{x:.1f}' for x in os.getloadavg())}): every process of the platform, the servers and "
        f"the load generator share them, so throughput cannot scale past them; CPU per committed command "
        "is the figure that carries to a bigger machine",
        flush=True,
    )
    status = 0
    first: float | None = None
    for n in counts:
        # Every instance runs its share of the tables before a run starts (fresh_platform waits for it).
        async with fresh_platform(names, replicas=n, table_instances=n) as (platform, _):
            db_url = platform.database_url
            ids = [p.env.get("TABLE_INSTANCE_ID", "") for p in platform.replica_processes["table"]]
            runs = []
            for i in range(args.runs):
                r = await sustained(platform, args.tables, 1000 * (i + 1), stream, args.warmup, args.full_window)
                runs.append(r)
                print(
                    f"n={n}  run {i + 1}/{args.runs}: {r['commands_per_s']:,.0f} committed commands/s, "
                    f"p50 {r['p50_ms']:.1f} ms, p99 {r['p99_ms']:.1f} ms, "
                    f"CPU {r['cpu_ms_per_command']:.2f} ms per command in the services "
                    f"({r['cpu_ms_per_command_all']:.2f} with NATS and Postgres; {r['cpu_cores']:.2f} cores busy, "
                    f"{r['generator_cores']:.2f} in the load generator)",
                    flush=True,
                )
                if r["failed"]:
                    print(f"n={n}  run {i + 1}: {r['failed']:.0f} TABLES FAILED", flush=True)
                    status = 1
            med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
            first = first or med["commands_per_s"]
            base = f"{counts[0]} instance{'s' if counts[0] > 1 else ''}"
            print(
                f"n={n}  median of {args.runs}: {med['commands_per_s']:,.0f} committed commands/s "
                f"({med['commands_per_s'] / first:.2f}x {base}, "
                f"{med['commands_per_s'] / echo_stream:.2f}x the stream echo), p50 {med['p50_ms']:.1f} ms, "
                f"p99 {med['p99_ms']:.1f} ms, {med['cpu_ms_per_command']:.2f} ms CPU per command in the "
                f"services, {med['cpu_ms_per_command_all']:.2f} with NATS and Postgres (load average now "
                f"{os.getloadavg()[0]:.1f})",
                flush=True,
            )
            pauses: list[float] = []
            affected = 0
            for i in range(args.runs if n >= 2 else 0):
                if i:  # the killed instance back, and its share of the partitions with it
                    await platform.replica_processes["table"][-1].start()
                await wait_balanced(db_url, ids)
                f = await failover(
                    platform,
                    db_url,
                    args.tables,
                    1000 * (args.runs + 1 + i),
                    stream,
                    args.warmup,
                    args.resume_timeout,
                )
                pauses += f.pauses
                affected += f.affected
                if not f.affected:
                    status = 1
                    print(f"n={n}  FAILOVER MEASURED NOTHING: no table of {f.victim} was playing", flush=True)
                print(
                    f"n={n}  failover {i + 1}/{args.runs}: {f.victim} SIGKILLed after {args.warmup:g} s at full "
                    f"speed (tables playing per instance: {', '.join(f'{k} {v}' for k, v in f.spread.items())}); "
                    f"its {f.affected} tables' pauses: {describe_pauses(f.pauses)} "
                    f"({len(f.pauses)} resumed within {args.resume_timeout:g} s)",
                    flush=True,
                )
                if not f.ok:
                    status = 1
                    print(
                        f"n={n}  FAILOVER LOST TABLES: {len(f.failed)} failed, "
                        f"{len(f.never_resumed)} never resumed within {args.resume_timeout:g} s, "
                        f"{len(f.others_failed)} other tables failed",
                        flush=True,
                    )
                    for tid, why in list(f.failed.items())[:5]:
                        print(f"n={n}    {tid} failed: {why}", flush=True)
                    for tid in f.never_resumed[:5]:
                        print(f"n={n}    {tid}: no command committed after the kill", flush=True)
                    for tid, why in f.others_failed[:5]:
                        print(f"n={n}    {tid}: {why}", flush=True)
                if f.open_failed:
                    print(
                        f"n={n}  failover {i + 1}: {len(f.open_failed)} tables opened meanwhile could not be "
                        "(CreateTable or JoinTable answered an error; the bot driver does not retry them, "
                        "its slot opens another table a second later), e.g.",
                        flush=True,
                    )
                    for tid, why in f.open_failed[:3]:
                        print(f"n={n}    {tid}: {why}", flush=True)
            if affected:
                print(
                    f"n={n}  failover over {args.runs} kills: {affected} tables affected, pause from the kill to "
                    f"each one's next committed command (through the redirects to the new owner): "
                    f"{describe_pauses(pauses)}",
                    flush=True,
                )
    return status


@contextlib.asynccontextmanager
async def fresh_platform(
    names: tuple[str, ...], replicas: int = 1, table_instances: int = 1
) -> AsyncIterator[tuple[Platform, nats.js.JetStreamContext]]:
    """A platform of its own (servers, data and all) for one row: nothing of an earlier row left on it;
    `replicas` processes of each replicated service (on a 3-node NATS cluster from 2 on) and
    `table_instances` of the table service, each holding its share of the partitions before the row
    starts."""
    with (
        tempfile.TemporaryDirectory(prefix="monopoly-bench-") as tmp,
        servers(Path(tmp), nats_nodes=3 if replicas > 1 else 1) as (nats_url, server_url, bus),
    ):
        db_url = await own_database(server_url) if os.environ.get("DATABASE_URL") else server_url
        platform = Platform(
            nats_url,
            db_url,
            Path(tmp) / "svc",
            clock_scale=1,
            services=names,
            bus=bus,
            replicas=replicas,
            table_replicas=table_instances,
        )
        await platform.start()
        if table_instances > 1:
            await wait_balanced(
                db_url, [p.env.get("TABLE_INSTANCE_ID", "") for p in platform.replica_processes["table"]]
            )
        nc, js = await natsauth.connect(bus.url_for(natsauth.ADMIN) if bus else nats_url)
        try:
            yield platform, js
        finally:
            await nc.close()
            await platform.stop()
            if db_url != server_url:
                await drop_database(server_url, db_url)


async def own_database(server_url: str) -> str:
    """A new database on the DATABASE_URL's server for one row: the tables of an earlier row (or of
    anything else using that database) would be resumed by the row's table service and measured with it."""
    name = f"monopoly_bench_{os.urandom(4).hex()}"
    conn = await asyncpg.connect(server_url)
    try:
        await conn.execute(f"CREATE DATABASE {name}")
    finally:
        await conn.close()
    return urllib.parse.urlunsplit(urllib.parse.urlsplit(server_url)._replace(path=f"/{name}"))


async def drop_database(server_url: str, db_url: str) -> None:
    name = urllib.parse.urlsplit(db_url).path.lstrip("/")
    conn = await asyncpg.connect(server_url)
    try:
        await conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    finally:
        await conn.close()


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tables", type=int, default=int(os.environ.get("TABLES", 32)))
    parser.add_argument(
        "--runs",
        type=int,
        default=int(os.environ["RUNS"]) if os.environ.get("RUNS") else None,
        help="3; 2 with --instances",
    )
    parser.add_argument(
        "--human-tables",
        type=table_counts,
        default=table_counts(os.environ.get("HUMAN_TABLES", "1000")),
        help="e.g. 1000,2000,5000: a human-pace row per count, each on a fresh platform (0: none)",
    )
    parser.add_argument("--think", type=float, default=3.0)
    parser.add_argument("--window", type=float, default=float(os.environ.get("WINDOW", 30)))
    parser.add_argument("--ramp", type=float, default=float(os.environ.get("RAMP", 100)), help="human: tables/s")
    parser.add_argument(
        "--human-instances",
        type=int,
        default=int(os.environ.get("HUMAN_INSTANCES", 1)),
        help="human: processes of the table service (they share the tables by partition leases)",
    )
    parser.add_argument(
        "--load-processes", type=int, default=int(os.environ.get("LOAD_PROCESSES", 2)), help="human: generators"
    )
    parser.add_argument(
        "--services",
        choices=("all", "table"),
        default=os.environ.get("SERVICES", "all"),
        help="all: auctions, trades and bets go through their services; table: the table runs them itself",
    )
    parser.add_argument(
        "--transport",
        choices=tuple(TRANSPORTS),
        default=os.environ.get("TRANSPORT", "stream"),
        help="how the bots send their commands: " + "; ".join(f"{k}: {v}" for k, v in TRANSPORTS.items()),
    )
    parser.add_argument(
        "--instances",
        type=instance_counts,
        default=instance_counts(os.environ["INSTANCES"]) if os.environ.get("INSTANCES") else None,
        help="e.g. 1,2,3: a platform with each count of every service instead of the full and human rows",
    )
    parser.add_argument(
        "--warmup", type=float, default=float(os.environ.get("WARMUP", 3)), help="instances: s before measuring"
    )
    parser.add_argument(
        "--full-window", type=float, default=float(os.environ.get("FULL_WINDOW", 10)), help="instances: s measured"
    )
    parser.add_argument(
        "--resume-timeout",
        type=float,
        default=float(os.environ.get("RESUME_TIMEOUT", 60)),
        help="instances: s a table may take to resume after the kill before it counts as never resumed",
    )
    args = parser.parse_args()
    if args.human_instances < 1:
        parser.error("--human-instances: at least 1")
    if args.runs is None:
        args.runs = 2 if args.instances else 3
    print(__doc__.strip(), "\n", flush=True)
    status = 0

    echo = await measure_echo()
    print(f"echo   bare grpc.aio unary, 64 in flight: {echo:,.0f} calls/s", flush=True)
    echo_stream = await measure_echo(stream=True)
    print(f"echo   bare grpc.aio bidirectional streams, 64 of them: {echo_stream:,.0f} exchanges/s", flush=True)
    if args.instances:
        return await bench_instances(args, args.instances, echo_stream)

    names = ("table", "auction", "trade", "casino") if args.services == "all" else ("table",)
    print(f"services: {', '.join(names)}; commands sent {TRANSPORTS[args.transport]}", flush=True)
    if args.runs:
        async with fresh_platform(names) as (platform, js):
            runs = []
            for i in range(args.runs):
                r = await full_speed(platform, js, args.tables, seed=1000 * (i + 1), stream=args.transport == "stream")
                runs.append(r)
                print(
                    f"full   run {i + 1}/{args.runs}: {r['commands_per_s']:,.0f} commands/s "
                    f"({r['table_commands_per_s']:,.0f} at the table, "
                    f"{r['service_moves_per_s']:,.0f} at the services), "
                    f"{r['events_per_s']:,.0f} events/s, p50 {r['p50_ms']:.1f} ms, p99 {r['p99_ms']:.1f} ms",
                    flush=True,
                )
            med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
            print(
                f"full   median of {args.runs}, {args.tables} tables: {med['commands_per_s']:,.0f} committed "
                f"commands/s ({med['commands_per_s'] / echo:.2f}x the bare unary echo, "
                f"{med['commands_per_s'] / echo_stream:.2f}x the stream echo), {med['events_per_s']:,.0f} events/s "
                f"({med['jetstream_msgs_per_s']:,.0f} JetStream messages/s), p50 {med['p50_ms']:.1f} ms, "
                f"p99 {med['p99_ms']:.1f} ms",
                flush=True,
            )
    for count in args.human_tables:  # each count on a platform of its own: no table of the last one left
        async with fresh_platform(names, table_instances=args.human_instances) as (platform, _):
            report, h, by_role = await human_pace(
                platform, count, args.think, args.window, args.load_processes, args.ramp
            )
        lat = report.latency_ms
        where = f" on {args.human_instances} table instances" if args.human_instances > 1 else ""
        print(
            f"human  {count} tables{where}, {args.think:g} s per decision, opened at {args.ramp:g}/s "
            f"by {args.load_processes} generator processes, then {args.window:g} s: "
            f"{report.commands_per_s:,.0f} commands/s, p50 {lat.get('p50', 0):.1f} ms, "
            f"p99 {lat.get('p99', 0):.1f} ms (HDR, corrected for coordinated omission); "
            f"never started {report.never_started}, stalled {report.stalled}, failed {report.failed}; "
            f"{report.service_polls:,} reads of a service behind its table; "
            f"table service CPU (all instances) {h['cpu_share']:.0%} of a core "
            f"({h['cpu_ms_per_command']:.2f} ms per command), "
            f"{h['rss_mb']:.0f} MB resident ({h['kb_per_table']:.0f} KB per table)",
            flush=True,
        )
        print(
            f"human  CPU in the window after the ramp, share of a core by role: {describe_roles(by_role)}", flush=True
        )
        if "box_busy" in h:
            print(
                f"human  the box over the same window ({psutil.cpu_count()} cores): busy {h['box_busy']:.0%}, "
                f"waiting on its disk {h['box_iowait']:.0%}, taken by the hypervisor (steal) {h['box_steal']:.0%}",
                flush=True,
            )
        if not report.ok:
            print("human  NOT every table played: the figures above do not hold for all of them", flush=True)
            for why, n in failure_reasons(report.failures).most_common(5):
                print(f"human    {n} x {why}", flush=True)
            if report.errors_by_code:
                codes = ", ".join(f"{code} {n}" for code, n in sorted(report.errors_by_code.items()))
                print(f"human    answers other than OK: {codes}", flush=True)
            status = 1
    return status


if __name__ == "__main__":
    os.environ.setdefault("GRPC_VERBOSITY", "ERROR")  # the generator processes' start is not news
    gc.set_threshold(50_000, 20, 20)  # the load generator holds thousands of table replicas
    sys.exit(asyncio.run(main()))
