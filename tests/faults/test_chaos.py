"""Chaos: three instances of every service on a 3-node NATS JetStream cluster, bot tables formed by
matchmaking, and a random service instance SIGKILLed every few seconds (one NATS node once), each
started again a little later.

Every other kill is a table-service instance: its tables' partitions move to the live instances
(their leases, `services/table/leases.py`) and the bots, redirected to the new owner, play on. For
each table the killed instance ran, the time from the kill to the table's next committed command is
measured (the failover pause; goal p99 < 5 s, reported, not asserted: a test asserts outcomes, the
benchmark measures). At most one instance of a service is down at a time, so each keeps two.

Once the games ended, the same checks as the fault suite (`records.check_records`): every game ended;
no seq gap; Postgres = JetStream = replay per table; the ledger balances; no auction, bet or trade
applied twice; every game rated exactly once; nobody left queued or in a live match.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import statistics
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

import asyncpg
import nats
import pytest

from client import BotTable, SubProtocolStubs, connect
from client.matchmaking import MatchmakingClient
from client.platform import Platform, ServiceProcess
from monopoly.v1 import table_pb2_grpc
from servicekit.bus import ensure_stream
from servicekit.embedded import NatsCluster, nats_cluster
from servicekit.natsauth import ADMIN

from .records import check_records, describe_stalled, form_and_play, until_ended, until_playing
from .servers import Postgres

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("chaos")]

INSTANCES = 3
NATS_NODES = 3
TABLES = 30
SEATS = 4
CLOCK_SCALE = 60
LEASE_TTL_S = 3.0
#: A kill every this many seconds while the chaos lasts; the victim is started again after RESTART_AFTER_S.
KILL_EVERY_S = 4.0
RESTART_AFTER_S = 3.0
CHAOS_S = 48.0
#: When the one NATS node is killed (after the start of the chaos) and for how long it stays down.
NATS_KILL_AT_S = 20.0
NATS_DOWN_S = 5.0
DEADLINE_S = 5.0
#: The games may take this long to end after the chaos, as long as they play (`records.until_ended`).
GAME_TIMEOUT_S = 600.0
#: A table the killed instance ran must play again within this (far above the goal: a stall, not a pace).
RESUME_TIMEOUT_S = 60.0
#: The services killed (the gateway, stateless and not on the bots' path, is left alone).
VICTIMS = ("table", "auction", "trade", "casino", "rating", "matchmaking")
ENV = {
    "MATCHMAKING_SMALL_TABLE_WAIT_S": "8.0",
    "RATING_MIN_REAL_MINUTES": "0.001",
    "NATS_STREAM_REPLICAS": str(NATS_NODES),
    "TABLE_LEASE_TTL_S": str(LEASE_TTL_S),
}


@dataclass
class Rig:
    postgres: Postgres
    cluster: NatsCluster
    platform: Platform
    pool: asyncpg.Pool
    js: nats.js.JetStreamContext
    stub: table_pb2_grpc.TableServiceStub
    services: SubProtocolStubs
    mm: MatchmakingClient
    closers: list[Callable[[], Awaitable[None]]] = field(default_factory=list)


@pytest.fixture(scope="module")
async def rig() -> AsyncIterator[Rig]:
    data = Path(tempfile.mkdtemp(prefix="monopoly-chaos-"))
    postgres = Postgres(data)
    db_url = await postgres.start()
    with contextlib.ExitStack() as stack:
        cluster = stack.enter_context(nats_cluster(data, NATS_NODES))
        platform = Platform(
            cluster.users.url,
            db_url,
            data,
            clock_scale=CLOCK_SCALE,
            extra_env=ENV,
            bus=cluster.users,
            replicas=INSTANCES,
            table_replicas=INSTANCES,
        )
        try:
            await platform.start()
            pool = await asyncpg.create_pool(db_url, min_size=0, max_size=2)
            nc = await nats.connect(
                cluster.users.url_for(ADMIN).split(","), max_reconnect_attempts=-1, reconnect_time_wait=0.5
            )
            js = nc.jetstream()
            await ensure_stream(js)
            channel, stub = connect(platform.table_target)
            services = SubProtocolStubs.connect({n: platform.target(n) for n in platform.external})
            mm = MatchmakingClient(platform.target("matchmaking"))
            r = Rig(postgres, cluster, platform, pool, js, stub, services, mm)
            r.closers = [mm.close, services.close, channel.close, nc.close, pool.close]
            yield r
            for close in r.closers:
                with contextlib.suppress(Exception):
                    await close()
        finally:
            await platform.stop()
            await postgres.close()


@dataclass
class Chaos:
    """The kills, the restarts, and the failover pauses of the table-service kills."""

    rig: Rig
    games: dict[str, BotTable]
    rng: random.Random = field(default_factory=lambda: random.Random(16))
    kills: list[str] = field(default_factory=list)
    pauses: list[float] = field(default_factory=list)
    never_resumed: list[str] = field(default_factory=list)
    down: set[str] = field(default_factory=set)
    tasks: list[asyncio.Task[None]] = field(default_factory=list)

    async def run(self, seconds: float) -> None:
        started = time.monotonic()
        nats_done = False
        turn = 0
        while time.monotonic() - started < seconds:
            if not nats_done and time.monotonic() - started >= NATS_KILL_AT_S:
                nats_done = True
                self.tasks.append(asyncio.create_task(self._nats_node()))
            service = "table" if turn % 2 == 0 else self.rng.choice(VICTIMS[1:])
            turn += 1
            if service not in self.down:
                index = self.rng.randrange(len(self.rig.platform.replica_processes[service]))
                await self._kill(service, index)
            await asyncio.sleep(KILL_EVERY_S)
        await asyncio.gather(*self.tasks)

    async def _kill(self, service: str, index: int) -> None:
        process = self.rig.platform.replica_processes[service][index]
        owned = await self._owned(process) if service == "table" else []
        self.down.add(service)
        await process.kill()
        killed_at = time.monotonic()
        self.kills.append(f"{service}-{index + 1}" + (f" ({len(owned)} tables)" if service == "table" else ""))
        self.tasks.append(asyncio.create_task(self._restart(service, process)))
        for table_id in owned:
            self.tasks.append(asyncio.create_task(self._resumed(table_id, killed_at)))

    async def _owned(self, process: ServiceProcess) -> list[str]:
        """The unfinished tables of the games here whose partition the instance holds right now."""
        async with self.rig.pool.acquire() as conn:
            rows = await conn.fetch(
                "SELECT t.table_id FROM tables t JOIN partition_leases l ON l.partition = t.partition "
                "WHERE l.owner = $1 AND NOT t.finished AND t.table_id = ANY($2::text[])",
                process.env["TABLE_INSTANCE_ID"],
                list(self.games),
            )
        return [r["table_id"] for r in rows]

    async def _restart(self, service: str, process: ServiceProcess) -> None:
        await asyncio.sleep(RESTART_AFTER_S)
        try:
            await process.start()
        finally:
            self.down.discard(service)

    async def _resumed(self, table_id: str, killed_at: float) -> None:
        game = self.games[table_id]
        before = game.commands
        while game.commands == before:
            if game.state is not None and game.state.finished:
                return  # its last command was the end: nothing left to resume
            if time.monotonic() - killed_at > RESUME_TIMEOUT_S:
                # What it waits for, read now: by the end of the run it may have played on.
                self.never_resumed.append(await describe_stalled(self.rig, [game]))
                return
            await asyncio.sleep(0.02)
        self.pauses.append(time.monotonic() - killed_at)

    async def _nats_node(self) -> None:
        node = self.rng.randrange(NATS_NODES)
        self.rig.cluster.nodes[node].kill()
        self.kills.append(f"nats-{node + 1}")
        await asyncio.sleep(NATS_DOWN_S)
        await asyncio.to_thread(self.rig.cluster.restart, node)


def p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]


async def test_chaos_every_service_killed_in_turn_and_a_nats_node(rig: Rig) -> None:
    playing = await form_and_play(rig, rig.mm, TABLES, SEATS, CLOCK_SCALE, DEADLINE_S)
    tickets, tasks = playing.tickets, playing.tasks
    games = {g.table_id: g for g in playing.games}
    chaos = Chaos(rig, games)
    try:
        await until_playing(rig, playing, 10, 120)
        await chaos.run(CHAOS_S)
        stalled = await until_ended(tasks, list(games.values()), GAME_TIMEOUT_S)
        for task in tasks:
            if task.done():
                task.result()  # a client that gave up raises here
        if stalled:
            kills = ", ".join(chaos.kills)
            raise AssertionError(
                f"{len(stalled)} of {len(games)} games did not end after the chaos (kills: {kills}):\n"
                + await describe_stalled(rig, stalled)
            )
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    assert any(k.startswith("table-") for k in chaos.kills), chaos.kills
    assert not chaos.never_resumed, "tables not played again within {:g} s after their instance died:\n{}".format(
        RESUME_TIMEOUT_S, "\n".join(chaos.never_resumed)
    )
    assert chaos.pauses, "no table of a killed instance was measured"
    events = await check_records(rig, list(games.values()), tickets)
    print(
        f"\nchaos: {len(games)} tables (formed in {playing.formed_s:.1f} s), {events} events, "
        f"{len(chaos.kills)} kills ({', '.join(chaos.kills)}); "
        f"failover pause of {len(chaos.pauses)} tables: median {statistics.median(chaos.pauses):.2f} s, "
        f"p99 {p99(chaos.pauses):.2f} s, max {max(chaos.pauses):.2f} s (goal p99 < 5 s); "
        f"{sum(g.unavailable for g in games.values())} retries by clients, "
        f"{sum(g.stale_watches for g in games.values())} silent watch streams opened again"
    )
