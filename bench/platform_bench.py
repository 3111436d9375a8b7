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
         CPU per command and resident memory per table.
With --services table the sub-protocols run inside the table (the table-only baseline).
With --transport unary the bots send each command as its own SubmitCommand call instead of
on a Play stream per table (the default).
The load generator is this process; the services and the servers are others.
NATS_URL / DATABASE_URL when set, else the embedded servers.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import nats
import psutil
from rich.console import Console

from client import BotTable, SubProtocolStubs, connect, platform_channel
from client.load import LoadSpec, Report, Targets, run_load
from client.platform import Platform
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


async def human_pace(
    platform: Platform, tables: int, think: float, window: float, processes: int, ramp: float
) -> tuple[Report, dict[str, float]]:
    """`monopoly load` (client.load) at a person's pace against the running platform: its report (with
    the tables that never started or stalled) and the table service's CPU and memory over the run."""
    assert platform.table.proc is not None
    service = psutil.Process(platform.table.proc.pid)
    rss_before = service.memory_info().rss
    spec = LoadSpec(
        targets=Targets(table=platform.table_target, **{n: platform.target(n) for n in platform.external}),
        tables=tables,
        think_s=think,
        ramp=ramp,
        duration_s=tables / ramp + window,  # every table opened, then `window` s of play
        via="create",
        processes=processes,
        seed=10_000,
    )
    cpu0 = sum(service.cpu_times()[:2])
    started = time.perf_counter()
    report = await asyncio.to_thread(run_load, spec, Console(stderr=True))
    elapsed = time.perf_counter() - started
    cpu = sum(service.cpu_times()[:2]) - cpu0
    rss = service.memory_info().rss
    return report, {
        "cpu_share": cpu / elapsed,
        "cpu_ms_per_command": 1000 * cpu / report.commands if report.commands else 0.0,
        "rss_mb": rss / 2**20,
        "kb_per_table": (rss - rss_before) / 1024 / tables,
    }


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tables", type=int, default=int(os.environ.get("TABLES", 32)))
    parser.add_argument("--runs", type=int, default=int(os.environ.get("RUNS", 3)))
    parser.add_argument("--human-tables", type=int, default=int(os.environ.get("HUMAN_TABLES", 1000)))
    parser.add_argument("--think", type=float, default=3.0)
    parser.add_argument("--window", type=float, default=float(os.environ.get("WINDOW", 30)))
    parser.add_argument("--ramp", type=float, default=float(os.environ.get("RAMP", 100)), help="human: tables/s")
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
    args = parser.parse_args()
    print(__doc__.strip(), "\n", flush=True)
    status = 0

    echo = await measure_echo()
    print(f"echo   bare grpc.aio unary, 64 in flight: {echo:,.0f} calls/s", flush=True)
    echo_stream = await measure_echo(stream=True)
    print(f"echo   bare grpc.aio bidirectional streams, 64 of them: {echo_stream:,.0f} exchanges/s", flush=True)

    with tempfile.TemporaryDirectory(prefix="monopoly-bench-") as tmp, servers(Path(tmp)) as (nats_url, db_url, bus):
        names = ("table", "auction", "trade", "casino") if args.services == "all" else ("table",)
        platform = Platform(nats_url, db_url, Path(tmp) / "svc", clock_scale=1, services=names, bus=bus)
        await platform.start()
        print(f"services: {', '.join(names)}; commands sent {TRANSPORTS[args.transport]}", flush=True)
        nc, js = await natsauth.connect(bus.url_for(natsauth.ADMIN) if bus else nats_url)
        try:
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
            if args.human_tables:
                report, h = await human_pace(
                    platform, args.human_tables, args.think, args.window, args.load_processes, args.ramp
                )
                lat = report.latency_ms
                print(
                    f"human  {args.human_tables} tables, {args.think:g} s per decision, opened at {args.ramp:g}/s "
                    f"by {args.load_processes} generator processes, then {args.window:g} s: "
                    f"{report.commands_per_s:,.0f} commands/s, p50 {lat.get('p50', 0):.1f} ms, "
                    f"p99 {lat.get('p99', 0):.1f} ms (HDR, corrected for coordinated omission); "
                    f"never started {report.never_started}, stalled {report.stalled}, failed {report.failed}; "
                    f"table service CPU {h['cpu_share']:.0%} of a core ({h['cpu_ms_per_command']:.2f} ms per command), "
                    f"{h['rss_mb']:.0f} MB resident ({h['kb_per_table']:.0f} KB per table)",
                    flush=True,
                )
                if not report.ok:
                    print("human  NOT every table played: the figures above do not hold for all of them", flush=True)
                    status = 1
        finally:
            await nc.close()
            await platform.stop()
    return status


if __name__ == "__main__":
    os.environ.setdefault("GRPC_VERBOSITY", "ERROR")  # the generator processes' start is not news
    gc.set_threshold(50_000, 20, 20)  # the load generator holds thousands of table replicas
    sys.exit(asyncio.run(main()))
