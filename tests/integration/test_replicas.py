"""Two processes each of the table service, matchmaking and rating (`Platform(replicas=2,
table_replicas=2)`) on one Postgres schema each and a 3-node NATS cluster (streams of 3 copies), as
`monopoly run --replicas 2` starts them.

* Matchmaking: many players queue through both replicas at once, whose matchers run side by side;
  every player is seated exactly once (R4: one live table at a time), never at two tables.
* Rating: each finished game is judged once and each player's rating moves once, also when the
  replica reading the table signals (the lease holder) is SIGKILLed: the other takes the lease.

The platform, its NATS and its database are this module's own: the session's services would share
these durable consumers otherwise.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import tempfile
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from urllib.parse import urlsplit

import asyncpg
import pytest

from client import BotTable, connect, platform_channel
from client.matchmaking import MatchmakingClient, Player, SeatTicket
from client.platform import Platform
from monopoly.v1 import rating_pb2, rating_pb2_grpc
from servicekit.embedded import NatsCluster, nats_cluster

from .conftest import SESSION_ENV
from .helpers import judged

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("replicas")]

PLAYERS = 24


@pytest.fixture(scope="module")
def cluster() -> Iterator[NatsCluster]:
    with tempfile.TemporaryDirectory(prefix="monopoly-replicas-nats-") as tmp, nats_cluster(Path(tmp), 3) as found:
        yield found


@pytest.fixture(scope="module")
async def replicated(cluster: NatsCluster, server_urls: tuple[str, str]) -> AsyncIterator[Platform]:
    url = server_urls[1]
    name = f"replicas_{secrets.token_hex(4)}"
    conn = await asyncpg.connect(url)
    await conn.execute(f"CREATE DATABASE {name}")
    await conn.close()
    data = Path(tempfile.mkdtemp(prefix="monopoly-replicas-"))
    platform = Platform(
        cluster.users.url,
        urlsplit(url)._replace(path=f"/{name}").geturl(),
        data,
        services=("table", "rating", "matchmaking"),
        extra_env={**SESSION_ENV, "NATS_STREAM_REPLICAS": "3"},
        bus=cluster.users,
        replicas=2,
        table_replicas=2,
    )
    await platform.start()
    try:
        yield platform
    finally:
        await platform.stop()
        if os.environ.get("CI"):  # what each replica said, for a failure seen only in CI
            for log in sorted(data.glob("*.log")):
                print(f"--- {log.name}\n" + log.read_text(errors="replace")[-3000:])


def test_the_launcher_runs_two_processes_of_each_service(replicated: Platform) -> None:
    counts = {name: len(found) for name, found in replicated.replica_processes.items()}
    assert counts == {"table": 2, "rating": 2, "matchmaking": 2}
    assert [p.env["TABLE_INSTANCE_ID"] for p in replicated.replica_processes["table"]] == ["table-1", "table-2"]
    ports = [p.grpc_port for found in replicated.replica_processes.values() for p in found]
    assert len(set(ports)) == len(ports)
    ids = [p.env.get("MATCHMAKING_INSTANCE_ID") for p in replicated.replica_processes["matchmaking"]]
    assert ids == ["matchmaking-1", "matchmaking-2"]
    targets = json.loads(replicated.targets_path.read_text())
    assert targets["replicas"]["matchmaking"] == [
        f"127.0.0.1:{p.grpc_port}" for p in replicated.replica_processes["matchmaking"]
    ]
    assert targets["matchmaking"].startswith("ipv4:")


async def test_R4_two_matchmaking_replicas_never_seat_a_player_twice(replicated: Platform) -> None:
    replicas = [f"127.0.0.1:{p.grpc_port}" for p in replicated.replica_processes["matchmaking"]]
    clients = [MatchmakingClient(target) for target in replicas]
    try:
        tag = uuid.uuid4().hex[:6]
        players: list[tuple[MatchmakingClient, Player]] = []
        for i in range(PLAYERS):
            client = clients[i % 2]  # half register and queue at each replica
            players.append((client, await client.register(f"p{i}-{tag}")))
        await asyncio.gather(*(client.enqueue(player, "classic") for client, player in players))
        try:
            seats: list[SeatTicket] = await asyncio.gather(
                *(client.wait_match(player, timeout=60) for client, player in players)
            )
        except TimeoutError:
            pytest.fail(f"not all seated in 60 s; their tickets: {await tickets_of(replicated, players)}")
    finally:
        for client in clients:
            await client.close()
    ours = {player.player_id for _, player in players}
    assert {s.player.player_id for s in seats} == ours
    conn = await asyncpg.connect(replicated.database_url)
    try:
        rows = await conn.fetch(
            "SELECT player_id, count(*) AS n, count(DISTINCT table_id) AS tables FROM matchmaking.match_seats "
            "WHERE player_id = ANY($1::text[]) GROUP BY player_id",
            list(ours),
        )
        tickets = await conn.fetch(
            "SELECT player_id, status, table_id FROM matchmaking.tickets WHERE player_id = ANY($1::text[])", list(ours)
        )
    finally:
        await conn.close()
    assert len(rows) == PLAYERS and all(r["n"] == 1 and r["tables"] == 1 for r in rows)  # each seated once
    assert sorted(t["status"] for t in tickets) == ["matched"] * PLAYERS  # one ticket each, matched once
    by_player = {t["player_id"]: t["table_id"] for t in tickets}
    assert all(by_player[s.player.player_id] == s.table_id for s in seats)  # the seat told is the seat booked
    per_table: dict[str, set[int]] = {}
    for s in seats:
        assert s.seat not in per_table.setdefault(s.table_id, set())  # no seat given twice
        per_table[s.table_id].add(s.seat)


async def tickets_of(platform: Platform, players: list[tuple[MatchmakingClient, Player]]) -> list[tuple[str, ...]]:
    conn = await asyncpg.connect(platform.database_url)
    try:
        rows = await conn.fetch(
            "SELECT player_id, status, coalesce(table_id, '') AS table_id, enqueued_at::text AS at "
            "FROM matchmaking.tickets WHERE player_id = ANY($1::text[]) ORDER BY enqueued_at",
            [p.player_id for _, p in players],
        )
    finally:
        await conn.close()
    return [(r["player_id"], r["status"], r["table_id"], r["at"]) for r in rows]


async def play_a_duel(platform: Platform, tag: str) -> tuple[str, list[SeatTicket]]:
    """Three players queue for a duel (three seats), matchmaking seats them, bots play it to its end."""
    async with MatchmakingClient(platform.target("matchmaking")) as mm:
        players = [await mm.register(f"{who}-{tag}") for who in ("ann", "ben", "cat")]
        seats = await mm.queue_and_wait(players, "duel", timeout=60)
    table_id = seats[0].table_id
    channel, stub = connect(platform.table_target)
    try:
        tokens = {s.seat: s.seat_token for s in seats}
        game = BotTable(stub, table_id=table_id, tokens=tokens, seed=3)
        state = await asyncio.wait_for(game.play(), 90)
    finally:
        await channel.close()
    assert state.finished
    return table_id, seats


async def test_two_rating_replicas_judge_each_game_once_and_a_killed_lease_holder_hands_over(
    replicated: Platform,
) -> None:
    channel = platform_channel(replicated.target("rating"))
    rating = rating_pb2_grpc.RatingServiceStub(channel)
    try:
        first, seats = await play_a_duel(replicated, uuid.uuid4().hex[:6])
        await judged(rating, first, timeout=60)

        # whichever replica held the lease, the first one dies now; the other must read on
        await replicated.replica_processes["rating"][0].kill()
        second, second_seats = await play_a_duel(replicated, uuid.uuid4().hex[:6])
        await judged(rating, second, timeout=60)
        await replicated.replica_processes["rating"][0].start()
        await asyncio.sleep(3)  # both replicas read again: a redelivery or a second judgement would show now

        conn = await asyncpg.connect(replicated.database_url)
        try:
            games = await conn.fetch(
                "SELECT table_id FROM rating.rated_games WHERE table_id = ANY($1::text[])", [first, second]
            )
            results = await conn.fetch(
                "SELECT table_id, player FROM rating.results WHERE table_id = ANY($1::text[])", [first, second]
            )
        finally:
            await conn.close()
        assert sorted(g["table_id"] for g in games) == sorted([first, second])
        assert len(results) == 6 and len({(r["table_id"], r["player"]) for r in results}) == 6
        for ticket in (*seats, *second_seats):
            profile = await rating.GetProfile(rating_pb2.GetProfileRequest(player=ticket.player.player_id), timeout=10)
            assert profile.games == 1  # judged once: one game on each player's profile
    finally:
        await channel.close()
