"""Several table-service instances share the tables: partitions leased in Postgres, commits fenced.

Each test runs its instances as processes against a database and a NATS of its own (the session's
platform and its table service are never touched): TTL 2 s, 16 partitions. Clients connect to one
instance and follow its redirects (`servicekit.routing`); `Instance.raw` does not.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import secrets
import signal
import sys
import urllib.request
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import asyncpg
import grpc
import pytest

from bots import HeuristicBot
from client import BotTable, SubProtocolStubs, bot_service_token, connect
from client.platform import ROOT, Platform, ServiceProcess, use_key
from engine import codec, replay
from monopoly.v1 import table_pb2, table_pb2_grpc
from servicekit.embedded import free_port, nats_server
from servicekit.routing import RoutedTableStub, RoutedWatch, served_by
from servicekit.wire import command_to_proto
from services.table import store
from services.table.leases import FENCED_SQLSTATE, partition_of

from .helpers import assert_matches_rows, envelopes_of, join_seats, row_event, table_state

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("partitions")]

PARTITIONS = 16
TTL_S = 2.0
#: How long a change of owners may take here (a few TTLs; generous on a loaded machine).
WINDOW_S = 30.0


@dataclass
class Instance:
    name: str
    process: ServiceProcess
    metrics_port: int
    channel: grpc.aio.Channel | None = None
    stub: table_pb2_grpc.TableServiceStub | None = None

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.process.grpc_port}"

    def connect(self) -> table_pb2_grpc.TableServiceStub:
        """A client's stub whose first instance is this one (it follows redirects: `servicekit.routing`)."""
        if self.stub is None:
            self.channel, self.stub = connect(self.address)
        return self.stub

    def raw(self) -> table_pb2_grpc.TableServiceStub:
        """A stub that follows no redirect: calls answered by this instance only."""
        self.connect()
        return table_pb2_grpc.TableServiceStub(self.channel)

    def metric(self, name: str) -> float:
        """A sample of this instance's /metrics (0 when absent)."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.metrics_port}/metrics", timeout=5) as reply:
            text = reply.read().decode()
        values = [float(line.split()[-1]) for line in text.splitlines() if line.startswith(name)]
        return sum(values)


@dataclass
class Cluster:
    database_url: str
    nats_url: str
    data: Path
    instances: list[Instance] = field(default_factory=list)

    def process(self, name: str, **env: str) -> Instance:
        port, metrics = free_port(), free_port()
        full = {
            **os.environ,
            "NATS_URL": self.nats_url,
            "DATABASE_URL": self.database_url,
            "TABLE_GRPC_PORT": str(port),
            "TABLE_METRICS_PORT": str(metrics),
            "TABLE_INSTANCE_ID": name,
            "TABLE_PARTITIONS": str(PARTITIONS),
            "TABLE_LEASE_TTL_S": str(TTL_S),
            "NATS_ANONYMOUS": "1",  # the URL carries the credentials when the server wants them
            "PYTHONPATH": os.pathsep.join([str(ROOT / "libs"), str(ROOT), os.environ.get("PYTHONPATH", "")]),
            "PYTHONUNBUFFERED": "1",
            **env,
        }
        log = self.data / f"{name}-{len(self.instances)}.log"
        instance = Instance(name, ServiceProcess("services.table.main", full, port, log), metrics)
        self.instances.append(instance)
        return instance

    async def start(self, name: str, **env: str) -> Instance:
        instance = self.process(name, **env)
        await instance.process.start()
        return instance

    async def owners(self) -> dict[str, int]:
        """Live leases by owner, as Postgres holds them."""
        conn = await asyncpg.connect(self.database_url)
        try:
            rows = await conn.fetch(
                "SELECT owner, count(*) AS n FROM partition_leases WHERE owner IS NOT NULL AND expires_at > now() "
                "GROUP BY owner"
            )
        finally:
            await conn.close()
        return {r["owner"]: r["n"] for r in rows}

    async def owner_of(self, table_id: str) -> str | None:
        conn = await asyncpg.connect(self.database_url)
        try:
            owner: str | None = await conn.fetchval(
                "SELECT owner FROM partition_leases WHERE partition = $1 AND expires_at > now()",
                partition_of(table_id, PARTITIONS),
            )
        finally:
            await conn.close()
        return owner

    async def until_owners(self, expected: dict[str, int], timeout: float = WINDOW_S) -> None:
        deadline = asyncio.get_running_loop().time() + timeout
        while (owners := await self.owners()) != expected:
            if asyncio.get_running_loop().time() > deadline:
                raise AssertionError(f"leases {owners} after {timeout:.0f} s, not {expected}")
            await asyncio.sleep(0.2)


@contextlib.contextmanager
def own_nats(path: Path) -> Iterator[str]:
    with nats_server(path, auth=False) as bus:  # an open server of its own: no durable consumers shared
        yield bus.url


@pytest.fixture
async def cluster(server_urls: tuple[str, str], tmp_path: Path) -> AsyncIterator[Cluster]:
    _, db_url = server_urls
    database = f"partitions_{secrets.token_hex(4)}"
    conn = await asyncpg.connect(db_url)
    await conn.execute(f"CREATE DATABASE {database}")
    await conn.close()
    own_db = urlsplit(db_url)._replace(path=f"/{database}").geturl()
    use_key(tmp_path, {})  # this process signs its clients' tokens with the instances' key
    with own_nats(tmp_path / "nats") as nats_url:
        c = Cluster(own_db, nats_url, tmp_path)
        try:
            yield c
        finally:
            for instance in c.instances:
                if instance.process.proc is not None and instance.process.proc.returncode is None:
                    with contextlib.suppress(ProcessLookupError):
                        instance.process.proc.send_signal(signal.SIGCONT)
                if instance.channel is not None:
                    await instance.channel.close()
            await asyncio.gather(*(i.process.stop() for i in c.instances))
            if os.environ.get("CI"):
                for log in tmp_path.glob("*.log"):
                    print(f"--- {log.name}\n" + log.read_text(errors="replace")[-3000:], file=sys.stderr)


async def create_on(instance: Instance, seed: int) -> str:
    reply = await instance.connect().CreateTable(
        table_pb2.CreateTableRequest(mode="classic", players=["a", "b", "c"], seed=seed), timeout=30
    )
    return str(reply.table_id)


async def seqs_of(database_url: str, table_id: str) -> list[int]:
    conn = await asyncpg.connect(database_url)
    try:
        rows = await conn.fetch("SELECT seq FROM table_events WHERE table_id = $1 ORDER BY seq", table_id)
    finally:
        await conn.close()
    return [r["seq"] for r in rows]


async def test_two_instances_split_the_partitions_then_one_takes_all_when_the_other_stops(cluster: Cluster) -> None:
    a = await cluster.start("a")
    await cluster.until_owners({"a": PARTITIONS})
    b = await cluster.start("b")
    await cluster.until_owners({"a": PARTITIONS // 2, "b": PARTITIONS // 2})  # a handed half back, b took it

    # Each creates its tables in partitions it holds; each runs them.
    tables = {name: [await create_on(inst, seed) for seed in (1, 2, 3)] for name, inst in (("a", a), ("b", b))}
    for name, ids in tables.items():
        for table_id in ids:
            assert await cluster.owner_of(table_id) == name
    assert a.metric("table_partitions_owned") == PARTITIONS // 2
    listed = await a.connect().ListInstances(table_pb2.ListInstancesRequest(), timeout=30)  # what a live view shows
    assert listed.partitions == PARTITIONS and listed.answered_by == "a"
    assert {(i.instance_id, i.address, i.partitions, i.tables, i.live) for i in listed.instances} == {
        ("a", a.address, PARTITIONS // 2, 3, True),
        ("b", b.address, PARTITIONS // 2, 3, True),
    }
    assert b.metric("table_actors_loaded") == 3

    stopping = asyncio.get_running_loop().time()
    await b.process.stop()  # SIGTERM: b hands its leases back
    await cluster.until_owners({"a": PARTITIONS}, timeout=3 * TTL_S + 10)
    print(f"a held every partition {asyncio.get_running_loop().time() - stopping:.1f} s after b's SIGTERM")
    for table_id in tables["b"]:  # a took b's tables over with their state
        state = await table_state(a.connect(), table_id)
        assert state.seq >= 1 and not state.finished
    deadline = asyncio.get_running_loop().time() + WINDOW_S
    while a.metric("table_actors_loaded") < 6:  # b's unfinished tables loaded when a took their partitions
        assert asyncio.get_running_loop().time() < deadline, "a did not load b's tables"
        await asyncio.sleep(0.2)


async def test_a_frozen_owner_is_fenced_and_its_table_goes_on_at_the_next_owner(cluster: Cluster) -> None:
    a = await cluster.start("a")
    await cluster.until_owners({"a": PARTITIONS})
    b = await cluster.start("b")
    await cluster.until_owners({"a": PARTITIONS // 2, "b": PARTITIONS // 2})
    table_id = await create_on(a, 7)
    stub_a = a.connect()
    tokens = await join_seats(stub_a, table_id, 3)
    game = BotTable(stub_a, seed=7, players=3)
    game.table_id, game.tokens = table_id, tokens
    bot = HeuristicBot(seed=1)
    for _ in range(10):  # a few commands committed by a, the owner
        state = await table_state(stub_a, table_id)
        command = bot.choose(state, state.actor)
        with contextlib.suppress(grpc.aio.AioRpcError):
            await stub_a.SubmitCommand(
                table_pb2.SubmitCommandRequest(
                    table_id=table_id,
                    command_id=secrets.token_hex(8),
                    seat_token=tokens[state.actor],
                    command=command_to_proto(command),
                ),
                timeout=30,
            )
    state = await table_state(stub_a, table_id)  # what a holds in memory, at the moment it freezes
    before = await seqs_of(cluster.database_url, table_id)
    assert before == list(range(1, state.seq + 1))

    assert a.process.proc is not None
    a.process.proc.send_signal(signal.SIGSTOP)
    try:
        deadline = asyncio.get_running_loop().time() + WINDOW_S
        while await cluster.owner_of(table_id) != "b":  # a's lease expired; b took the partition
            assert asyncio.get_running_loop().time() < deadline, "b never took the frozen owner's partition"
            await asyncio.sleep(0.2)
        # b runs the table now: it moves on there (its timers, a command), past where a froze.
        stub_b = b.connect()
        at_b = await table_state(stub_b, table_id)
        assert at_b.seq >= state.seq
        # The SQL fence itself: a commit with a's old epoch is refused, in the same transaction.
        conn = await asyncpg.connect(cluster.database_url)
        try:
            old_epoch = await conn.fetchval(
                "SELECT epoch - 1 FROM partition_leases WHERE partition = $1", partition_of(table_id, PARTITIONS)
            )
            args = store.append_args(table_id, at_b.seq + 1, [], [], 0, at_b, False, [], fence=("a", old_epoch))
            with pytest.raises(asyncpg.PostgresError) as refused:
                await store.append_many(conn, [args])
            assert refused.value.sqlstate == FENCED_SQLSTATE
        finally:
            await conn.close()
        # A command straight to a, sent while it is frozen: it is read as soon as a wakes up.
        command = bot.choose(state, state.actor)
        request = table_pb2.SubmitCommandRequest(
            table_id=table_id, command_id=secrets.token_hex(8), seat_token=tokens[state.actor],
            command=command_to_proto(command),
        )  # fmt: skip
        sent = asyncio.ensure_future(a.raw().SubmitCommand(request, timeout=30))
        await asyncio.sleep(0.5)
    finally:
        a.process.proc.send_signal(signal.SIGCONT)
    with pytest.raises(grpc.aio.AioRpcError) as told:
        await sent
    assert told.value.code() == grpc.StatusCode.UNAVAILABLE, told.value.details()
    trailing = dict(told.value.trailing_metadata() or ())
    assert trailing.get("served-by") == b.address, (trailing, told.value.details())
    fenced_commits = a.metric("table_commits_fenced_total")
    print(f"a's commits refused by the fence: {fenced_commits:.0f}")

    await a.process.stop()  # a goes: b keeps every partition (no rebalancing back while the game ends)
    await cluster.until_owners({"b": PARTITIONS})

    # The game goes on at b to its end; Postgres holds each seq once, none missing.
    game.stub = b.connect()
    game.state = None
    final = await asyncio.wait_for(game.play(), 240)
    assert final.finished
    assert await seqs_of(cluster.database_url, table_id) == list(range(1, final.seq + 1))
    conn = await asyncpg.connect(cluster.database_url)
    try:
        rows = await conn.fetch("SELECT envelope, payload FROM table_events WHERE table_id = $1 ORDER BY seq", table_id)
    finally:
        await conn.close()
    replayed = replay([row_event(r) for r in rows])
    assert codec.public_state_data(replayed) == codec.public_state_data(final)  # what b's stream showed


async def test_the_same_instance_id_or_another_partition_count_refuses_to_start(cluster: Cluster) -> None:
    await cluster.start("a")
    twin = cluster.process("a")
    with pytest.raises(RuntimeError, match="exited with code"):
        await twin.process.start()
    assert "instance id 'a' is in use by another live instance" in twin.process.log_path.read_text()

    other = cluster.process("c", TABLE_PARTITIONS=str(PARTITIONS * 2))
    with pytest.raises(RuntimeError, match="exited with code"):
        await other.process.start()
    log = other.process.log_path.read_text()
    assert f"TABLE_PARTITIONS={PARTITIONS * 2}" in log and f"split into {PARTITIONS} partitions" in log
    assert json.dumps(await cluster.owners()) == json.dumps({"a": PARTITIONS})  # a went on untouched


async def test_a_new_table_asked_of_an_instance_holding_no_partition_yet_is_made_by_one_that_does(
    cluster: Cluster,
) -> None:
    # Both beat every 20 s: b starts beside a, which holds every partition until its next beat hands
    # b's share back, and b takes none before its own next beat.
    a = await cluster.start("a", TABLE_LEASE_TTL_S="60")
    await cluster.until_owners({"a": PARTITIONS})
    b = await cluster.start("b", TABLE_LEASE_TTL_S="60")
    request = table_pb2.CreateTableRequest(mode="classic", players=["a", "b", "c"], seed=5)
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await b.raw().CreateTable(request, timeout=30)
    assert refused.value.code() == grpc.StatusCode.UNAVAILABLE
    assert "holds no partition yet" in str(refused.value.details())
    assert served_by(refused.value) == a.address  # the redirect a routed client follows
    assert await cluster.owners() == {"a": PARTITIONS}, "the test wants b still without a partition"

    table_id = await create_on(b, 5)  # routed through b: made by a
    assert await cluster.owner_of(table_id) == "a"
    assert (await table_state(b.connect(), table_id)).seq >= 1


async def test_a_client_of_the_instance_that_does_not_run_a_table_plays_it_to_its_end(cluster: Cluster) -> None:
    a = await cluster.start("a")
    await cluster.until_owners({"a": PARTITIONS})
    b = await cluster.start("b")
    await cluster.until_owners({"a": PARTITIONS // 2, "b": PARTITIONS // 2})
    table_id = await create_on(b, 11)
    assert await cluster.owner_of(table_id) == "b"
    with pytest.raises(grpc.aio.AioRpcError) as told:  # a itself does not run it, and says who does
        await a.raw().GetTable(table_pb2.GetTableRequest(table_id=table_id), timeout=30)
    assert told.value.code() == grpc.StatusCode.UNAVAILABLE
    assert dict(told.value.trailing_metadata() or ())["served-by"] == b.address

    stub = a.connect()  # the client knows a only: JoinTable, Play and WatchTable follow it to b
    game = BotTable(stub, seed=11, players=3)
    game.table_id = table_id
    game.tokens = await join_seats(stub, table_id, 3)
    final = await asyncio.wait_for(game.play(), 240)
    assert final.finished and game.commands > 10
    assert (
        isinstance(stub, RoutedTableStub) and stub.hops >= 1 and stub.owners[table_id] == b.address
    )  # then straight to b
    assert await seqs_of(cluster.database_url, table_id) == list(range(1, final.seq + 1))


async def test_a_watch_stream_survives_its_owners_sigkill_without_a_gap_or_a_duplicate(cluster: Cluster) -> None:
    a = await cluster.start("a")
    await cluster.until_owners({"a": PARTITIONS})
    b = await cluster.start("b")
    await cluster.until_owners({"a": PARTITIONS // 2, "b": PARTITIONS // 2})
    table_id = await create_on(b, 13)
    stub = a.connect()  # the first instance is a; the table runs at b until b dies
    items: list[table_pb2.WatchTableResponse] = []
    stream = stub.WatchTable(table_pb2.WatchTableRequest(table_id=table_id, from_seq=0, seat_token=bot_service_token()))

    async def follow() -> None:
        async for item in stream:
            items.append(item)

    watching = asyncio.create_task(follow())
    game = BotTable(stub, seed=13, players=3, think_s=0.02)  # slow enough to be killed mid-game
    game.table_id = table_id
    game.tokens = await join_seats(stub, table_id, 3)
    playing = asyncio.create_task(game.play())
    deadline = asyncio.get_running_loop().time() + WINDOW_S * 4
    while game.commands < 30:
        assert not playing.done(), "the game ended before the owner could be killed"
        assert asyncio.get_running_loop().time() < deadline
        await asyncio.sleep(0.05)
    await b.process.kill()  # SIGKILL: a takes b's partitions at its next beat (b's session is gone)
    killed, seen = asyncio.get_running_loop().time(), len(items)
    while len(items) == seen and not watching.done():
        await asyncio.sleep(0.05)
    print(f"the stream went on {asyncio.get_running_loop().time() - killed:.1f} s after the owner's SIGKILL")
    final = await asyncio.wait_for(playing, 240)
    await asyncio.wait_for(watching, 60)  # the stream ends with the game, at a
    assert final.finished
    assert await cluster.owner_of(table_id) == "a"
    assert isinstance(stream, RoutedWatch) and stream.resumed >= 1

    assert items[0].HasField("snapshot")
    envelopes = envelopes_of(items[1:])
    first = items[0].snapshot.seq
    assert [e.seq for e in envelopes] == list(range(first + 1, final.seq + 1))  # no gap, no duplicate
    conn = await asyncpg.connect(cluster.database_url)
    try:
        rows = await conn.fetch(
            "SELECT seq, type, envelope, payload, game_ms FROM table_events WHERE table_id = $1 AND seq > $2"
            " ORDER BY seq",
            table_id,
            first,
        )
    finally:
        await conn.close()
    assert_matches_rows(envelopes, rows, table_id)  # exactly what Postgres holds


async def test_a_platform_on_two_table_instances_plays_delegated_games_at_both(
    server_urls: tuple[str, str], tmp_path: Path
) -> None:
    """Auctions, trades and bets run at their services; their results reach the table's owner whichever
    instance's consumer got them (a shared durable consumer: the other one forwards them)."""
    _, db_url = server_urls
    database = f"partitions_{secrets.token_hex(4)}"
    conn = await asyncpg.connect(db_url)
    await conn.execute(f"CREATE DATABASE {database}")
    await conn.close()
    own_db = urlsplit(db_url)._replace(path=f"/{database}").geturl()
    env = {"TABLE_PARTITIONS": str(PARTITIONS), "TABLE_LEASE_TTL_S": str(TTL_S)}
    with own_nats(tmp_path / "nats") as nats_url:
        platform = Platform(
            nats_url, own_db, tmp_path / "data", services=("table", "auction", "trade", "casino"),
            extra_env=env, table_replicas=2,
        )  # fmt: skip
        await platform.start()
        channels: list[grpc.aio.Channel] = []
        services = SubProtocolStubs.connect({n: platform.target(n) for n in platform.external})
        try:
            cluster = Cluster(own_db, nats_url, tmp_path)
            await cluster.until_owners({"table-1": PARTITIONS // 2, "table-2": PARTITIONS // 2})
            first, second = platform.replica_processes["table"]
            games = []
            for i, process in enumerate((first, second)):  # one table in each instance's partitions
                channel, creator = connect(f"127.0.0.1:{process.grpc_port}")
                channels.append(channel)
                game = BotTable(creator, seed=21 + i, players=3, services=services)
                await game.create()
                assert await cluster.owner_of(game.table_id) == f"table-{i + 1}"
                games.append(game)
            channel, stub = connect(f"127.0.0.1:{first.grpc_port}")  # the players know the first instance only
            channels.append(channel)
            for game in games:
                game.stub = stub
            finals = await asyncio.wait_for(asyncio.gather(*(g.play() for g in games)), 300)
            for game, final in zip(games, finals, strict=True):
                assert final.finished
                assert game.event_counts["AuctionSettled"] > 0, "no auction result reached the table"
                assert await seqs_of(own_db, game.table_id) == list(range(1, final.seq + 1))
            forwarded = nacked = 0.0
            for port in platform.replica_metrics_ports["table"]:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as reply:
                    lines = reply.read().decode().splitlines()
                forwarded += sum(
                    float(line.split()[-1])
                    for line in lines
                    if line.startswith("table_results_total") and 'outcome="forwarded"' in line
                )
                nacked += sum(
                    float(line.split()[-1])
                    for line in lines
                    if line.startswith("consumer_messages_total") and 'outcome="nacked"' in line
                )
            print(f"results sent on to the owning instance: {forwarded:.0f}")
            assert nacked == 0, "a result was refused by the instance that got it instead of sent on"
        finally:
            await services.close()
            for channel in channels:
                await channel.close()
            await platform.stop()
