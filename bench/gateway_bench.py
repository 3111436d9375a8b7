"""Gateway throughput: browser messages per second and watching connections per core.

What is measured, everything on this one machine (servers, services, load):
  requests  CONNECTIONS WebSocket connections each sending MESSAGES requests the gateway
            answers by itself (schema checks and token verification: the per-message
            work every request pays before any backend call), at most WINDOW in flight
            per connection (under the rate limit, which the bench lifts by spreading the
            load over connections): answered messages/s, and per CPU-second of the
            gateway process;
  watch     TABLES bot tables played at full speed, each followed by WATCHERS spectator
            connections: pushes/s delivered (each push: the events of one command, the
            table's view and the seat's legal commands, as JSON), and per CPU-second of
            the gateway process. Connections per core = pushes per CPU-second divided by
            the pushes a connection gets at human pace (about one per second: one
            command a second at a table of people).
The load generator is this process; the gateway, the services and the servers are others.
NATS_URL / DATABASE_URL when set, else the embedded servers.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

import aiohttp
import psutil

from client import BotTable, connect
from client.platform import Platform
from servicekit import auth
from servicekit.embedded import servers
from servicekit.settings import token_secret

#: Pushes per second one connection gets at a table of people (about a command a second).
HUMAN_PUSHES_PER_S = 1.0


def cpu_seconds(pid: int) -> float:
    times = psutil.Process(pid).cpu_times()
    return float(times.user + times.system)


async def requests(url: str, pid: int, connections: int, messages: int, window: int) -> tuple[float, float]:
    forged = "e30.bm90LXNpZ25lZA"  # well-formed, not signed by the platform: the gateway refuses it itself
    body = {"op": "command", "table_id": "t1", "seat_token": forged, "command": {"type": "Roll"}}

    async def one(session: aiohttp.ClientSession) -> int:
        answered = 0
        async with session.ws_connect(url, max_msg_size=0) as ws:
            sent = 0
            while answered < messages:
                while sent < messages and sent - answered < window:
                    sent += 1
                    await ws.send_str(json.dumps({"id": sent, **body}))
                msg = await ws.receive()
                data = json.loads(msg.data)
                assert data["error"]["code"] == "UNAUTHENTICATED", data
                answered += 1
        return answered

    async with aiohttp.ClientSession() as session:
        cpu0, t0 = cpu_seconds(pid), time.perf_counter()
        total = sum(await asyncio.gather(*(one(session) for _ in range(connections))))
        wall, cpu = time.perf_counter() - t0, cpu_seconds(pid) - cpu0
    return total / wall, total / max(cpu, 1e-9)


async def watch(platform: Platform, pid: int, tables: int, watchers: int) -> tuple[float, float, int]:
    channel, stub = connect(platform.table_target)
    games = [BotTable(stub, seed=100 + i, players=4) for i in range(tables)]
    for g in games:
        await g.create()
    secret = token_secret()  # the platform's key (Platform sets TOKEN_SECRET from its data folder)
    pushes = 0

    async def follow(session: aiohttp.ClientSession, table_id: str) -> None:
        nonlocal pushes
        token = auth.issue(secret, table_id, -1, "bench", role="spectator")
        async with session.ws_connect(platform.lobby_url + "ws", max_msg_size=0) as ws:
            await ws.send_str(json.dumps({"id": 1, "op": "watch", "table_id": table_id, "token": token}))
            async for msg in ws:
                data = json.loads(msg.data)
                if data.get("type") == "table":
                    pushes += 1
                    if data["view"]["finished"]:
                        return

    async with aiohttp.ClientSession() as session:
        followers = [asyncio.create_task(follow(session, g.table_id)) for g in games for _ in range(watchers)]
        await asyncio.sleep(1.0)  # every watcher has its snapshot before the games start
        cpu0, t0, start = cpu_seconds(pid), time.perf_counter(), pushes
        await asyncio.gather(*(g.play() for g in games))
        await asyncio.wait_for(asyncio.gather(*followers), 120)
        wall, cpu = time.perf_counter() - t0, cpu_seconds(pid) - cpu0
    await channel.close()
    delivered = pushes - start
    return delivered / wall, delivered / max(cpu, 1e-9), delivered


async def main(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="gateway-bench-") as tmp, servers(Path(tmp) / "srv") as (nats, db, bus):
        # The per-connection rate limit is lifted: the bench measures the gateway's work, not its limit.
        platform = Platform(
            nats,
            db,
            Path(tmp) / "svc",
            services=("table", "matchmaking", "gateway"),
            extra_env={
                "GATEWAY_RATE_PER_S": "1000000",
                "GATEWAY_BURST": "1000000",
                "GATEWAY_CLIENT_RATE_PER_S": "1000000",
                "GATEWAY_CLIENT_BURST": "1000000",
                "GATEWAY_CONNECTIONS_PER_CLIENT": "0",  # every connection comes from this one address
            },
            bus=bus,
        )
        await asyncio.gather(*(p.start(timeout=180) for p in platform.processes.values()))
        try:
            proc = platform.processes["gateway"].proc
            assert proc is not None
            url = platform.lobby_url + "ws"
            rate, per_cpu = await requests(url, proc.pid, args.connections, args.messages, args.window)
            print(
                f"requests: {args.connections} connections x {args.messages} messages: "
                f"{rate:,.0f} messages/s, {per_cpu:,.0f} per gateway CPU-second",
                flush=True,
            )
            pushes, pushes_cpu, n = await watch(platform, proc.pid, args.tables, args.watchers)
            print(
                f"watch: {args.tables} bot tables x {args.watchers} watchers, {n:,} pushes: {pushes:,.0f} pushes/s, "
                f"{pushes_cpu:,.0f} per gateway CPU-second -> about {pushes_cpu / HUMAN_PUSHES_PER_S:,.0f} "
                f"connections per core at human pace ({HUMAN_PUSHES_PER_S:g} push/s each)",
                flush=True,
            )
        finally:
            await platform.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--connections", type=int, default=20)
    parser.add_argument("--messages", type=int, default=400)
    parser.add_argument("--window", type=int, default=8, help="requests in flight per connection")
    parser.add_argument("--tables", type=int, default=4)
    parser.add_argument("--watchers", type=int, default=25, help="spectator connections per table")
    asyncio.run(main(parser.parse_args()))
    sys.exit(0)
