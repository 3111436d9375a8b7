"""How fast a busy grpc.aio server takes new calls, and what becomes of the calls it does not take.

A grpc.aio server takes new calls one at a time: its serving task asks gRPC core for the next
call, awaits it, starts its handler and asks again. Each call taken costs at least one pass of
the event loop, so a loop busy with other work (a table service's open streams, its commits)
takes few calls a second, however idle its CPU might be between passes. The calls not yet taken
wait in gRPC core, which cancels one that waited longer than
`grpc.server_max_unrequested_time_in_server` (30 s by default): the client sees `CANCELLED`,
and the service's handlers never see the call (its `grpc_server_handled_total` does not count it).

This runs a bare health-check server whose loop has `--busy-ms` of other work per pass, opens
`--calls` unary calls at once, and counts how they ended:

    .venv/bin/python bench/grpc_accept.py [--calls 1500] [--busy-ms 5] [--unrequested-s 3]

`--unrequested-s 0` keeps gRPC's default (30 s). Seen here: 1,500 calls, 5 ms per pass, 3 s: 120
answered, 1,380 CANCELLED after 3 s; 2,500 calls with the default: 1,032 answered in 30 s, the rest
CANCELLED at 30 s. The platform's answer is fewer unary calls per table opened (`CreateTable` gives
a service the seats' tokens: one call where there were five) and opening tables on a ramp.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections import Counter

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_health.v1.health import aio as health_aio


async def busy(per_pass_s: float) -> None:
    """The loop's other work: `per_pass_s` of CPU in every pass."""
    while True:
        time.sleep(per_pass_s)  # blocking on purpose: it stands for handlers' CPU
        await asyncio.sleep(0)


async def measure(calls: int, busy_ms: float, unrequested_s: int) -> tuple[Counter[str], float]:
    options: list[tuple[str, int]] = [("grpc.so_reuseport", 0)]
    if unrequested_s:
        options.append(("grpc.server_max_unrequested_time_in_server", unrequested_s))
    server = grpc.aio.server(options=options)
    health_pb2_grpc.add_HealthServicer_to_server(health_aio.HealthServicer(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    worker = asyncio.create_task(busy(busy_ms / 1000))
    ended: Counter[str] = Counter()
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = health_pb2_grpc.HealthStub(channel)
            await stub.Check(health_pb2.HealthCheckRequest(), timeout=10)  # connected before the burst

            async def one() -> None:
                try:
                    await stub.Check(health_pb2.HealthCheckRequest(), timeout=120)
                    ended["OK"] += 1
                except grpc.aio.AioRpcError as exc:
                    ended[exc.code().name] += 1

            started = time.monotonic()
            await asyncio.gather(*(one() for _ in range(calls)))
            return ended, time.monotonic() - started
    finally:
        worker.cancel()
        await server.stop(None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=1500)
    parser.add_argument("--busy-ms", type=float, default=5.0, help="the loop's other work per pass")
    parser.add_argument(
        "--unrequested-s", type=int, default=3, help="grpc.server_max_unrequested_time_in_server (0: 30)"
    )
    args = parser.parse_args()
    ended, seconds = asyncio.run(measure(args.calls, args.busy_ms, args.unrequested_s))
    wait = f"{args.unrequested_s} s" if args.unrequested_s else "30 s (default)"
    print(
        f"measured: {args.calls} unary calls opened at once against a grpc.aio server whose loop has "
        f"{args.busy_ms:g} ms of other work per pass, calls taken within {wait}"
    )
    print(f"  ended: {dict(ended)}, the last after {seconds:.1f} s (CANCELLED: never taken by the server)")


if __name__ == "__main__":
    main()
