"""The platform survives its backing servers: bot tables through matchmaking, every service an external
process, on NATS and Postgres this suite owns and breaks.

Each fault runs on fresh tables formed by matchmaking, injected once every table has committed
commands: (a) SIGKILL of Postgres and a restart on the same data dir, (b) Postgres stopped for 10 s,
(c) SIGKILL of NATS and a restart, (d) the table service frozen (SIGSTOP) past the clients'
deadlines, then SIGCONT, (e) the table service killed while Postgres is down, started again before
Postgres is back. After each: every game ends; `table_events` has no seq gap; Postgres rows,
JetStream messages and the engine's replay agree per table; the money ledger balances; each
auction, bet and trade was applied once; every game was rated exactly once; nobody is left queued
or in a live match. The longest pause players saw (no command committed at any table) is printed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

import asyncpg
import grpc
import nats
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from client import BotTable, SubProtocolStubs, connect, platform_channel
from client.matchmaking import MatchmakingClient
from client.platform import Platform
from engine import RequestPause, codec
from monopoly.v1 import rating_pb2_grpc, table_pb2, table_pb2_grpc
from servicekit import grpcserver
from servicekit.bus import ensure_stream
from servicekit.wire import command_to_proto

from .records import check_records, describe_stalled, form_and_play, until_ended, until_playing
from .servers import Nats, Postgres

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("faults")]

TABLES = 2  # per fault
SEATS = 4
CLOCK_SCALE = 60  # a game in seconds of real time; a 10 s outage is 10 game minutes of due timers
#: Clients give a command this long (the table service's freeze outlasts it).
DEADLINE_S = 3.0
FREEZE_S = 6.0
OUTAGE_S = 10.0
#: The games may take this long to end after a fault, as long as they play (`records.until_ended`).
GAME_TIMEOUT_S = 600.0
ENV = {"MATCHMAKING_SMALL_TABLE_WAIT_S": "8.0", "RATING_MIN_REAL_MINUTES": "0.001"}
REPORT: list[str] = []


@dataclass
class Rig:
    postgres: Postgres
    nats_server: Nats
    platform: Platform
    pool: asyncpg.Pool
    js: nats.js.JetStreamContext
    nc: nats.aio.client.Client
    stub: table_pb2_grpc.TableServiceStub
    services: SubProtocolStubs
    mm: MatchmakingClient
    rating: rating_pb2_grpc.RatingServiceStub
    closers: list[Callable[[], Awaitable[None]]] = field(default_factory=list)


@pytest.fixture(scope="module")
async def rig() -> AsyncIterator[Rig]:
    data = Path(tempfile.mkdtemp(prefix="monopoly-faults-"))
    postgres, nats_server = Postgres(data), Nats(data)
    db_url = await postgres.start()
    nats_url = nats_server.start()
    platform = Platform(nats_url, db_url, data, clock_scale=CLOCK_SCALE, extra_env=ENV, bus=nats_server.users)
    try:
        await platform.start()
        # The suite's own connections must ride out the faults as well: small pool, reconnecting NATS.
        pool = await asyncpg.create_pool(db_url, min_size=0, max_size=2)
        nc = await nats.connect(nats_server.admin_url, max_reconnect_attempts=-1, reconnect_time_wait=0.5)
        js = nc.jetstream()
        await ensure_stream(js)
        channel, stub = connect(platform.table_target)
        services = SubProtocolStubs.connect({n: platform.target(n) for n in platform.external})
        rating_channel = platform_channel(platform.target("rating"))
        mm = MatchmakingClient(platform.target("matchmaking"))
        r = Rig(
            postgres, nats_server, platform, pool, js, nc, stub, services, mm,
            rating_pb2_grpc.RatingServiceStub(rating_channel),
        )  # fmt: skip
        r.closers = [mm.close, services.close, rating_channel.close, channel.close, nc.close, pool.close]
        yield r
        for close in r.closers:
            with contextlib.suppress(Exception):
                await close()
    finally:
        await platform.stop()
        nats_server.close()
        await postgres.close()
        print("\n" + "\n".join(REPORT))


class Progress:
    """When the tables last made progress: the longest stretch without a committed command anywhere."""

    def __init__(self, games: list[BotTable]) -> None:
        self.games = games
        self.longest = 0.0
        self._task = asyncio.create_task(self._watch())

    def _total(self) -> int:
        return sum(g.commands for g in self.games)

    async def _watch(self) -> None:
        last, since = self._total(), time.monotonic()
        while True:
            await asyncio.sleep(0.05)
            now, total = time.monotonic(), self._total()
            if total != last or all(g.state is not None and g.state.finished for g in self.games):
                self.longest = max(self.longest, now - since)
                last, since = total, now

    def stop(self) -> float:
        self._task.cancel()
        return self.longest


async def play_through(rig: Rig, name: str, fault: Callable[[list[BotTable]], Awaitable[int]]) -> list[BotTable]:
    """Form tables, start playing, inject `fault` on them (it returns how many processes it killed) once every
    table has committed commands, let every game end, then check every record."""
    playing = await form_and_play(rig, rig.mm, TABLES, SEATS, CLOCK_SCALE, DEADLINE_S)
    tickets, games, tasks = playing.tickets, playing.games, playing.tasks
    try:
        await until_playing(rig, playing, 20, 120)
        progress = Progress(games)
        started = time.monotonic()
        kills = await fault(games)
        outage = time.monotonic() - started
        stalled = await until_ended(tasks, games, GAME_TIMEOUT_S)
        pause = progress.stop()
        for task in tasks:
            if task.done():
                task.result()  # a client that gave up raises here
        if stalled:
            raise AssertionError(
                f"{len(stalled)} of {len(games)} games did not end after {name}:\n"
                + await describe_stalled(rig, stalled)
            )
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    events = await check_records(rig, games, tickets)
    REPORT.append(
        f"fault {name}: injected for {outage:.1f} s, longest pause players saw {pause:.1f} s; "
        f"{len(games)} tables, {events} events, "
        f"{kills} processes killed; {sum(g.unavailable for g in games)} retries by clients, "
        f"{sum(g.stale_watches for g in games)} silent watch streams opened again"
    )
    return games


#: Services with no Postgres or NATS of their own (the gateway speaks only to the others' gRPC APIs): their
#: health does not follow a backing server's outage.
NO_BACKING_SERVERS = frozenset({"gateway"})


async def until_health(rig: Rig, status: int, timeout: float, service: str = "") -> None:
    """Every service that has backing servers reports `status` (of the health name `service`) within `timeout`."""
    deadline = time.monotonic() + timeout
    for name in rig.platform.processes:
        if name in NO_BACKING_SERVERS:
            continue
        async with platform_channel(rig.platform.target(name)) as channel:
            stub = health_pb2_grpc.HealthStub(channel)
            while True:
                with contextlib.suppress(grpc.aio.AioRpcError):
                    reply = await stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=2)
                    if reply.status == status:
                        break
                assert time.monotonic() < deadline, f"{name} health never became {status}"
                await asyncio.sleep(0.1)


async def test_a_postgres_sigkill_and_restart_on_the_same_data_dir(rig: Rig) -> None:
    async def fault(games: list[BotTable]) -> int:
        rig.postgres.kill()
        await asyncio.sleep(1.0)
        await rig.postgres.start()
        return 1

    await play_through(rig, "(a) Postgres SIGKILL + restart", fault)


async def test_b_postgres_stopped_for_10_s(rig: Rig) -> None:
    probes: list[str] = []

    async def fault(games: list[BotTable]) -> int:
        await rig.postgres.stop()
        started = time.monotonic()
        try:
            # Health is honest meanwhile: NOT_SERVING while Postgres is away, SERVING once it is back.
            await until_health(rig, health_pb2.HealthCheckResponse.NOT_SERVING, OUTAGE_S)
            # ...and alive: the liveness probe's name stays SERVING, so an outage restarts no pod
            await until_health(rig, health_pb2.HealthCheckResponse.SERVING, 2, service=grpcserver.LIVENESS)
            probes.extend(await probe_outage(rig, games, started + OUTAGE_S))
            await asyncio.sleep(max(0.0, OUTAGE_S - (time.monotonic() - started)))
        finally:  # a failed check must not leave Postgres down for the faults after it
            await rig.postgres.start()
        await until_health(rig, health_pb2.HealthCheckResponse.SERVING, 30)
        return 0

    await play_through(rig, "(b) Postgres stopped 10 s", fault)
    # A move sent while Postgres was away was refused with UNAVAILABLE and told how long to wait. (The
    # bots' own calls may see nothing of it: tables waiting on a service's result make none.)
    assert probes and probes[-1] == "UNAVAILABLE+hint", f"no UNAVAILABLE with a retry hint; answers: {probes}"


async def probe_outage(rig: Rig, games: list[BotTable], until: float) -> list[str]:
    """Ask for a pause (E5: any active player, at any time, and it must be saved) at each table in turn,
    until one is refused with UNAVAILABLE and a `retry-after-ms` hint (Postgres is away: the table
    cannot commit it) or `until`; the answers seen, the last one "UNAVAILABLE+hint" if it came. A
    request the table takes after the outage is one nobody answers: silence rejects it (E5)."""
    answers: list[str] = []
    while time.monotonic() < until:
        for game in games:
            try:
                view = await rig.stub.GetTable(table_pb2.GetTableRequest(table_id=game.table_id), timeout=2)
                state = codec.state_from_data(json.loads(view.state_json))
                seats = [s for s in game.tokens if not state.players[s].bankrupt]
                if state.finished or not seats:
                    continue
                request = table_pb2.SubmitCommandRequest(
                    table_id=game.table_id,
                    command_id=uuid.uuid4().hex,
                    seat_token=game.tokens[seats[0]],
                    command=command_to_proto(RequestPause(seats[0])),
                )
                await rig.stub.SubmitCommand(request, timeout=2)
                answers.append("OK")
            except grpc.aio.AioRpcError as exc:
                hinted = any(key == "retry-after-ms" for key, _ in exc.trailing_metadata() or ())
                answers.append(exc.code().name + ("+hint" if hinted else ""))
                if exc.code() == grpc.StatusCode.UNAVAILABLE and hinted:
                    return answers
            await asyncio.sleep(0.2)
    return answers


async def test_c_nats_sigkill_and_restart(rig: Rig) -> None:
    async def fault(games: list[BotTable]) -> int:
        rig.nats_server.kill()
        await asyncio.sleep(1.0)
        rig.nats_server.start()
        return 1

    await play_through(rig, "(c) NATS SIGKILL + restart", fault)


async def test_d_the_table_service_frozen_past_the_clients_deadlines(rig: Rig) -> None:
    async def fault(games: list[BotTable]) -> int:
        await rig.platform.table.freeze(FREEZE_S)
        return 0

    await play_through(rig, f"(d) table service SIGSTOP {FREEZE_S:.0f} s", fault)


async def test_e_a_service_killed_while_postgres_is_down(rig: Rig) -> None:
    async def fault(games: list[BotTable]) -> int:
        await rig.postgres.stop()
        await rig.platform.table.kill()
        starting = asyncio.create_task(rig.platform.table.start())  # waits for Postgres (servicekit.db)
        await asyncio.sleep(3.0)
        await rig.postgres.start()
        await starting
        return 1

    await play_through(rig, "(e) table service SIGKILL while Postgres is down", fault)
