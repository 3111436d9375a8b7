"""A flooding seat is cut to its quota (RESOURCE_EXHAUSTED with `retry-after-ms`), and another
table's players play on, answered as usual. The first probe runs a table service here with small
quotas, so it does not depend on how fast this machine can flood; the second measures what a
flood costs the other tables of a table service of its own, run as the platform runs it."""

from __future__ import annotations

import asyncio
import json
import math
import os
import secrets
import subprocess
import sys
import time
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from urllib.parse import urlsplit

import asyncpg
import grpc
import pytest

from client import BotTable, connect
from client.platform import Platform
from engine import EndTurn, Roll
from monopoly.v1 import table_pb2, table_pb2_grpc
from servicekit.embedded import nats_server
from servicekit.natsauth import BusUsers
from servicekit.quotas import QuotaSettings
from servicekit.wire import command_to_proto

from ..integration.helpers import get
from .helpers import table_service

pytestmark = pytest.mark.integration

QUOTA = QuotaSettings(commands_per_s=5, commands_burst=10)
FLOOD = 60


@pytest.fixture
async def small_quotas(platform: Platform, pool: asyncpg.Pool) -> AsyncIterator[table_pb2_grpc.TableServiceStub]:
    """A table service in this process (the session's database) whose seats may send 5 commands/s."""
    async with table_service(platform, pool, QUOTA) as stub:
        yield stub


async def test_a_seat_flooding_commands_is_refused_with_a_retry_hint_and_another_table_plays_on(
    small_quotas: table_pb2_grpc.TableServiceStub,
) -> None:
    stub = small_quotas
    abuser, other = BotTable(stub, seed=1401, players=2), BotTable(stub, seed=1402, players=2)
    await abuser.create()
    await other.create()
    view = await get(stub, abuser.table_id)
    idle = 1 - view.actor  # not this seat's turn: every command is refused and changes nothing

    def flooding(i: int) -> table_pb2.SubmitCommandRequest:
        return table_pb2.SubmitCommandRequest(
            table_id=abuser.table_id,
            command_id=f"flood-{i}",
            seat_token=abuser.tokens[idle],
            command=command_to_proto(EndTurn(idle)),
        )

    hints: list[int] = []

    async def one(i: int) -> str:
        try:
            await stub.SubmitCommand(flooding(i), timeout=30)
        except grpc.aio.AioRpcError as exc:
            if exc.code() == grpc.StatusCode.RESOURCE_EXHAUSTED:
                hints.append(int(dict(exc.trailing_metadata() or ()).get("retry-after-ms", "0")))
                assert "too many command calls" in (exc.details() or "")
            return exc.code().name
        return "OK"

    codes = Counter(await asyncio.gather(*(one(i) for i in range(FLOOD))))
    assert codes["OK"] == 0, codes  # not its turn: none applied
    assert codes["RESOURCE_EXHAUSTED"] >= FLOOD - QUOTA.commands_burst - 10, codes
    assert hints and all(h > 0 for h in hints)

    async def stream() -> AsyncIterator[table_pb2.SubmitCommandRequest]:
        for i in range(FLOOD):
            yield flooding(FLOOD + i)

    played: Counter[str] = Counter()
    async for answer in stub.Play(stream()):  # on a Play stream too, each refusal says when to come back
        played[answer.refused.code or "OK"] += 1
        if answer.refused.code == "RESOURCE_EXHAUSTED":
            assert answer.refused.retry_after_ms > 0
    assert played["OK"] == 0 and played["RESOURCE_EXHAUSTED"] > 0, played

    # Another table's seat has a quota of its own: answered at once.
    theirs = await get(stub, other.table_id)
    answer = await stub.SubmitCommand(
        table_pb2.SubmitCommandRequest(
            table_id=other.table_id,
            command_id="after-the-flood",
            seat_token=other.tokens[theirs.actor],
            command=command_to_proto(Roll(theirs.actor)),
        ),
        timeout=10,
    )
    assert "DiceRolled" in [e.type for e in answer.events]


# --- The flood's cost to the other tables -----------------------------------------------------------

ROOT = Path(__file__).parents[2]
#: The table service's quotas in the flood probe: a seat's commands at 20/s, bursts of 40 (a bot
#: thinking 50 ms needs 20/s at most; the default, 200/s, is for bots at full speed). By hand,
#: FLOOD_PROBE_SERVICE_ENV='{"QUOTA_COMMANDS_PER_S": "1e9", ...}' shows the same flood without them.
FLOOD_SERVICE_ENV: dict[str, str] = json.loads(
    os.environ.get("FLOOD_PROBE_SERVICE_ENV") or '{"QUOTA_COMMANDS_PER_S": "20", "QUOTA_COMMANDS_BURST": "40"}'
)
#: Tables played at a normal pace beside the flood, and each bot's thinking time between moves.
PLAYING_TABLES = 4
THINK_S = 0.05
#: Seconds of each phase: without the flood, with it, and without it again.
PHASE_S = 8.0
#: The flood: unary calls and Play streams of one client (one connection), each as fast as answered.
FLOOD_CALLS = int(os.environ.get("FLOOD_PROBE_CALLS") or "32")
FLOOD_STREAMS = 8
FLOOD_NICE = int(os.environ.get("FLOOD_PROBE_NICE") or "10")
#: The bound: p99 with the flood <= FACTOR x the p99 without it + SLACK_S, or FLOOR_S if that is more.
#: The floor: a quiet p99 of 20 ms makes 3 x + 50 ms a 110 ms bound, inside what a second process
#: (the flooder) costs the others on two cores whatever the service does; without quotas the flood
#: took the others' p99 to 341 ms (docstring below), well above it.
FACTOR = 3.0
SLACK_S = 0.050
FLOOR_S = 0.250


@pytest.fixture(scope="module")
def flood_bus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BusUsers]:
    """A NATS of its own: the probe's table service has consumers of its own, apart from the session's."""
    with nats_server(tmp_path_factory.mktemp("flood-nats")) as users:
        yield users


@pytest.fixture(scope="module")
async def flood_platform(
    flood_bus: BusUsers, server_urls: tuple[str, str], tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Platform]:
    """The table service as a process of its own (as deployed), in a database of its own."""
    db_url = server_urls[1]
    database = f"flood_{secrets.token_hex(4)}"
    conn = await asyncpg.connect(db_url)
    await conn.execute(f"CREATE DATABASE {database}")
    await conn.close()
    own_db = urlsplit(db_url)._replace(path=f"/{database}").geturl()
    platform = Platform(
        flood_bus.url,
        own_db,
        tmp_path_factory.mktemp("flood-svc"),
        services=("table",),
        bus=flood_bus,
        extra_env=FLOOD_SERVICE_ENV,
    )
    await platform.start()
    try:
        yield platform
    finally:
        await platform.stop()


async def flood(target: str, table_id: str, token: str, seat: int, seconds: float) -> None:
    """The abusive client (run in a process of its own, so its own work does not slow the players'
    client): its seat's EndTurn, not its turn, on `FLOOD_CALLS` unary loops and `FLOOD_STREAMS` Play
    streams of one channel, each sent again as soon as answered, retry hints ignored. Prints what it
    was answered, by status."""
    channel, stub = connect(target)
    codes: Counter[str] = Counter()
    ids = iter(range(10**9))
    stop_at = time.monotonic() + seconds

    def request() -> table_pb2.SubmitCommandRequest:
        i = next(ids)
        return table_pb2.SubmitCommandRequest(
            table_id=table_id,
            command_id=f"flood-{i}",
            seat_token=token,
            command=command_to_proto(EndTurn(seat)),
            expected_seq=1 if i % 2 else 0,  # every other one stale: refused before the table's actor
        )

    async def unary() -> None:
        while time.monotonic() < stop_at:
            try:
                await stub.SubmitCommand(request(), timeout=30)
                codes["OK"] += 1
            except grpc.aio.AioRpcError as exc:
                codes[exc.code().name] += 1

    async def stream() -> None:
        queue: asyncio.Queue[None] = asyncio.Queue()

        async def requests() -> AsyncIterator[table_pb2.SubmitCommandRequest]:
            while time.monotonic() < stop_at:
                yield request()
                await queue.get()  # the next once this one is answered

        async for answer in stub.Play(requests()):
            codes[answer.refused.code or "OK"] += 1
            queue.put_nowait(None)

    print("flooding", flush=True)
    await asyncio.gather(*(unary() for _ in range(FLOOD_CALLS)), *(stream() for _ in range(FLOOD_STREAMS)))
    await channel.close()
    print(json.dumps(codes), flush=True)


def p99(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, math.ceil(0.99 * len(ordered)) - 1)]


async def test_a_flood_raises_the_other_tables_p99_by_no_more_than_its_bound(flood_platform: Platform) -> None:
    """One client floods its seat's commands (EndTurn out of turn, every other one with a stale
    `expected_seq`, each sent again as soon as answered, retry hints ignored: 32 unary loops and 8
    Play streams on one connection) while 4 tables play at a normal pace (a move every 50 ms); their
    command latency p99 without the flood, with it, and without it again, in this run.

    The bound: p99 with the flood <= 3 x p99 without it (the larger of the two quiet phases: this
    machine's load drifts) + 50 ms, and never below 250 ms (`FLOOR_S`). What guarantees it: past
    its burst, the flooding seat's calls
    are refused by the token interceptor before the handler runs (`servicekit.quotas`: no table
    actor, no Postgres), and each refusal is answered 100 ms late, so the 40 calls it keeps in flight
    get 400 refusals a second at most, plus its seat's 20 commands, instead of as many as the
    service's one event loop can answer. Seen on this 2-core machine: without quotas (by hand, 1e9)
    the same flood took the others' p99 from 73 to 341 ms; with quotas refused at once
    (QUOTA_REFUSAL_DELAY_MS=0), from 59 to 619 ms (12,480 refusals in 9 s); with both, 63 to 120 ms."""
    target = flood_platform.table_target
    channel, stub = connect(target)
    stop = asyncio.Event()
    playing: list[BotTable] = []

    async def keep_playing(i: int) -> None:
        game = 0
        while not stop.is_set():
            game += 1
            bot_table = BotTable(stub, seed=1700 + 100 * i + game, players=2, think_s=THINK_S, stream_commands=False)
            await bot_table.create()
            playing.append(bot_table)
            task = asyncio.create_task(bot_table.play())
            done, _ = await asyncio.wait([task, asyncio.create_task(stop.wait())], return_when=asyncio.FIRST_COMPLETED)
            if task not in done:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)

    def mark() -> dict[int, int]:
        return {id(t): len(t.latencies) for t in playing}

    def since(start: dict[int, int]) -> list[float]:
        return [x for t in list(playing) for x in t.latencies[start.get(id(t), 0) :]]

    abuser = BotTable(stub, seed=1799, players=2)
    await abuser.create()
    idle = 1 - (await get(stub, abuser.table_id)).actor
    players = [asyncio.create_task(keep_playing(i)) for i in range(PLAYING_TABLES)]
    try:
        await asyncio.sleep(2.0)  # the tables are created and playing
        start = mark()
        await asyncio.sleep(PHASE_S)
        quiet = since(start)

        code = (
            "import asyncio, sys; from tests.security.test_quotas import flood; "
            "asyncio.run(flood(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), float(sys.argv[5])))"
        )
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "libs"), str(ROOT)])}
        args = [target, abuser.table_id, abuser.tokens[idle], str(idle), str(PHASE_S + 1)]
        # Niced: an abusive client's own work is on its machine, not the service's (2 cores here).
        proc = await asyncio.create_subprocess_exec(
            "nice", "-n", str(FLOOD_NICE), sys.executable, "-c", code, *args, cwd=ROOT, env=env, stdout=subprocess.PIPE
        )
        assert proc.stdout is not None
        assert (await asyncio.wait_for(proc.stdout.readline(), 60)).strip() == b"flooding"
        await asyncio.sleep(0.5)  # its burst spent
        start = mark()
        await asyncio.sleep(PHASE_S)
        flooded = since(start)
        out, _ = await asyncio.wait_for(proc.communicate(), 60)
        codes = Counter(json.loads(out))

        await asyncio.sleep(1.0)
        start = mark()
        await asyncio.sleep(PHASE_S)
        quiet_again = since(start)
    finally:
        stop.set()
        await asyncio.gather(*players, return_exceptions=True)
        await channel.close()

    base = max(p99(quiet), p99(quiet_again))
    report = (
        f"p99 quiet {p99(quiet) * 1000:.1f} ms ({len(quiet)} commands), flooded {p99(flooded) * 1000:.1f} ms "
        f"({len(flooded)}), quiet again {p99(quiet_again) * 1000:.1f} ms ({len(quiet_again)}); "
        f"flood answers {dict(codes)}"
    )
    print(report)
    assert len(quiet) > 100 and len(flooded) > 100 and len(quiet_again) > 100, report
    assert p99(flooded) <= max(FACTOR * base + SLACK_S, FLOOR_S), report
    assert codes["OK"] == 0, report  # not its turn: nothing applied
    assert codes["RESOURCE_EXHAUSTED"] > codes["FAILED_PRECONDITION"] + codes["ABORTED"], report
