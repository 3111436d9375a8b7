"""The matchmaking service with the table service, on real NATS and Postgres (R4).

Its own platform (table + matchmaking) with a short small-table wait
(`MATCHMAKING_SMALL_TABLE_WAIT_S`): queues per mode, parties on one team,
signed seat tokens the table service accepts, one queue / one live table per
player, restart with queued tickets, custom tables with their rule card.
Tables run at clock scale 1 so they stay live for the whole module.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import AsyncIterator

import grpc
import pytest
from nats.js import JetStreamContext
from nats.js.errors import NotFoundError

from client import platform_channel
from client.matchmaking import MatchmakingClient, Player, SeatTicket
from client.platform import Platform
from engine import Roll, Surrender
from engine.events import GameEnded
from monopoly.v1 import common_pb2, matchmaking_pb2, table_pb2, table_pb2_grpc
from servicekit import auth, db, signals
from servicekit.settings import token_secret
from servicekit.wire import command_to_proto, envelope
from services.matchmaking import store
from services.matchmaking.matcher import Matchmaker
from services.matchmaking.queues import Rules

from .helpers import join_seats, rule_id, table_state

pytestmark = pytest.mark.integration

SMALL_WAIT_S = 8.0  # short enough for the small-table test (the restart test lengthens it for itself)
WAIT = 30.0


@pytest.fixture(scope="module")
def mm_platform(platform: Platform) -> Platform:
    """The session's platform (one table service per NATS: they share their durable consumers); it runs
    matchmaking with the short small-table wait of this module (conftest's SESSION_ENV)."""
    assert platform.processes["matchmaking"].env["MATCHMAKING_SMALL_TABLE_WAIT_S"] == str(SMALL_WAIT_S)
    return platform


@pytest.fixture(scope="module")
async def mm(mm_platform: Platform) -> AsyncIterator[MatchmakingClient]:
    client = MatchmakingClient(mm_platform.target("matchmaking"))
    try:
        yield client
    finally:
        await client.close()


@pytest.fixture(scope="module")
async def table(mm_platform: Platform) -> AsyncIterator[table_pb2_grpc.TableServiceStub]:
    channel = platform_channel(mm_platform.table_target)
    try:
        yield table_pb2_grpc.TableServiceStub(channel)
    finally:
        await channel.close()


async def players(mm: MatchmakingClient, n: int, prefix: str = "p") -> list[Player]:
    return [await mm.register(f"{prefix}{i}-{uuid.uuid4().hex[:4]}") for i in range(n)]


async def status(mm: MatchmakingClient, p: Player) -> matchmaking_pb2.QueueStatus:
    """The first message of WatchQueue: the ticket as it is now."""
    async for s in mm.stub.WatchQueue(matchmaking_pb2.WatchQueueRequest(player_token=p.token), timeout=10):
        return s
    raise AssertionError("WatchQueue ended without a status")


async def refused(call: object) -> grpc.aio.AioRpcError:
    try:
        await call  # type: ignore[misc]
    except grpc.aio.AioRpcError as exc:
        return exc
    raise AssertionError("the call was not refused")


async def match_event(js: JetStreamContext, subject: str) -> matchmaking_pb2.MatchEvent:
    """The last MatchEvent on a subject, once the outbox relay has published it."""
    deadline = time.monotonic() + 10
    while True:
        try:
            msg = await js.get_last_msg("MONOPOLY_MATCH_EVENTS", subject)
        except NotFoundError:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.1)
            continue
        return matchmaking_pb2.MatchEvent.FromString(msg.data)


def one_table(seats: list[SeatTicket]) -> str:
    assert len({s.table_id for s in seats}) == 1, seats
    return seats[0].table_id


async def test_classic_four_players_get_seat_tokens_the_table_accepts(
    mm: MatchmakingClient, table: table_pb2_grpc.TableServiceStub, js: JetStreamContext
) -> None:
    four = await players(mm, 4)
    seats = await mm.queue_and_wait(four, "classic", timeout=WAIT)
    table_id = one_table(seats)
    assert sorted(s.seat for s in seats) == [0, 1, 2, 3]
    match = seats[0].match
    assert match.mode == "classic" and match.rated and match.status == "live" and len(match.seats) == 4
    for s in seats:
        claims = auth.verify(token_secret(), s.seat_token)
        assert (claims.table_id, claims.seat, claims.player, claims.role) == (
            table_id,
            s.seat,
            s.player.player_id,
            "player",
        )
    view = await table.GetTable(table_pb2.GetTableRequest(table_id=table_id), timeout=10)
    assert view.mode == "classic"
    actor = view.actor
    by_seat = {s.seat: s for s in seats}
    other = by_seat[(actor + 1) % 4]
    roll = command_to_proto(Roll(actor))
    exc = await refused(
        table.SubmitCommand(
            table_pb2.SubmitCommandRequest(
                table_id=table_id, command_id="mm-forged", seat_token=other.seat_token, command=roll
            ),
            timeout=10,
        )
    )
    assert exc.code() == grpc.StatusCode.PERMISSION_DENIED
    reply = await table.SubmitCommand(
        table_pb2.SubmitCommandRequest(
            table_id=table_id, command_id="mm-roll", seat_token=by_seat[actor].seat_token, command=roll
        ),
        timeout=10,
    )
    assert reply.events
    # match.formed went out through the outbox
    event = await match_event(js, f"monopoly.match.{table_id}.formed")
    assert event.type == "formed" and event.match.table_id == table_id
    assert sorted(s.player_id for s in event.match.seats) == sorted(p.player_id for p in four)


async def test_duel_forms_only_at_three(mm: MatchmakingClient) -> None:
    three = await players(mm, 3, "d")
    for p in three[:2]:
        await mm.enqueue(p, "duel")
    await asyncio.sleep(1.0)
    first = await status(mm, three[0])
    assert (first.status, first.position, first.waiting) == ("waiting", 1, 2)
    await mm.enqueue(three[2], "duel")
    seats = [await mm.wait_match(p, WAIT) for p in three]
    one_table(seats)
    assert sorted(s.seat for s in seats) == [0, 1, 2]
    assert seats[0].match.mode == "duel" and len(seats[0].match.seats) == 3


async def test_team_forms_only_at_four_and_a_party_sits_on_one_team(mm: MatchmakingClient) -> None:
    singles = await players(mm, 4, "s")
    for p in singles[:3]:
        await mm.enqueue(p, "team")
    await asyncio.sleep(1.0)
    assert (await status(mm, singles[2])).status == "waiting"
    await mm.enqueue(singles[3], "team")
    seats = [await mm.wait_match(p, WAIT) for p in singles]
    one_table(seats)
    assert sorted(s.seat for s in seats) == [0, 1, 2, 3]
    assert sorted(s.team for s in seats[0].match.seats) == [0, 0, 1, 1]

    # two parties of two: each on one team
    a, b = await players(mm, 2, "a"), await players(mm, 2, "b")
    party_a, party_b = uuid.uuid4().hex, uuid.uuid4().hex
    await mm.enqueue(a[0], "team", party_a, 2)
    await mm.enqueue(b[0], "team", party_b, 2)
    await mm.enqueue(b[1], "team", party_b, 2)
    await asyncio.sleep(0.6)
    assert (await status(mm, b[0])).status == "waiting"  # party a is not complete yet
    await mm.enqueue(a[1], "team", party_a, 2)
    seated = {p.player_id: (await mm.wait_match(p, WAIT)).seat for p in a + b}
    assert len({(await mm.wait_match(p, WAIT)).table_id for p in a + b}) == 1
    for party in (a, b):
        assert sorted(seated[p.player_id] for p in party) in ([0, 2], [1, 3])

    # a party and two singles
    c, solo = await players(mm, 2, "c"), await players(mm, 2, "solo")
    party_c = uuid.uuid4().hex
    await mm.enqueue(solo[0], "team")
    await mm.enqueue(c[0], "team", party_c)
    await mm.enqueue(solo[1], "team")
    await mm.enqueue(c[1], "team", party_c)
    seated = {p.player_id: (await mm.wait_match(p, WAIT)).seat for p in c + solo}
    assert sorted(seated[p.player_id] for p in c) in ([0, 2], [1, 3])


async def test_one_queue_and_one_live_table_at_a_time(mm: MatchmakingClient, js: JetStreamContext) -> None:
    (p,) = await players(mm, 1, "once")
    await mm.enqueue(p, "classic")
    for mode in ("classic", "speed"):
        exc = await refused(mm.enqueue(p, mode))
        assert exc.code() == grpc.StatusCode.FAILED_PRECONDITION and rule_id(exc) == "R4"
        assert "already waiting in the classic queue" in (exc.details() or "")
    exc = await refused(mm.host_custom(p))
    assert exc.code() == grpc.StatusCode.FAILED_PRECONDITION
    cancelled = await mm.cancel(p)
    assert cancelled.status == "cancelled"

    # seated at a live duel table: no queue until the table's GameEnded
    trio = await players(mm, 3, "live")
    seats = await mm.queue_and_wait(trio, "duel", timeout=WAIT)
    table_id = one_table(seats)
    exc = await refused(mm.enqueue(trio[0], "classic"))
    assert exc.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert f"already seated at live table {table_id}" in (exc.details() or "")
    mine = await mm.my_seat(trio[1])
    assert (mine.table_id, mine.seat) == (table_id, seats[1].seat)

    # the table's GameEnded (published here as the table would) frees them, once even if sent twice
    ended = GameEnded(winner=0, places=(1, 2, 3), reason="last_player")
    batch = common_pb2.EventBatch(events=[envelope(table_id, 999, ended, 0, 1, int(time.time() * 1000))])
    for _ in range(2):
        await js.publish(signals.subject("lifecycle", table_id), batch.SerializeToString())
    deadline = time.monotonic() + 15
    while True:
        try:
            await mm.enqueue(trio[0], "classic")
            break
        except grpc.aio.AioRpcError as exc:
            if exc.code() != grpc.StatusCode.FAILED_PRECONDITION or time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.2)
    await mm.cancel(trio[0])
    finished = await match_event(js, f"monopoly.match.{table_id}.finished")
    assert (finished.type, list(finished.places)) == ("finished", [1, 2, 3])


async def test_forged_expired_or_wrong_tokens_are_unauthenticated(mm: MatchmakingClient) -> None:
    (p,) = await players(mm, 1, "tok")
    body, _, sig = p.token.partition(".")
    forged = body + "." + ("A" if sig[0] != "A" else "B") + sig[1:]
    expired = auth.issue(token_secret(), "*", -1, p.player_id, role="account", ttl_s=-60)
    seat_token = auth.issue(token_secret(), "some-table", 0, p.player_id)
    other_secret = auth.issue("another-secret", "*", -1, p.player_id, role="account")
    for token in (forged, expired, other_secret, ""):
        exc = await refused(mm.stub.Enqueue(matchmaking_pb2.EnqueueRequest(player_token=token, mode="classic")))
        assert exc.code() == grpc.StatusCode.UNAUTHENTICATED, token
    # a valid token of another kind (a seat token) is not an account: the access policy refuses it
    exc = await refused(mm.stub.Enqueue(matchmaking_pb2.EnqueueRequest(player_token=seat_token, mode="classic")))
    assert exc.code() == grpc.StatusCode.PERMISSION_DENIED and "account" in (exc.details() or "")
    exc = await refused(mm.enqueue(p, "nonsense"))
    assert exc.code() == grpc.StatusCode.INVALID_ARGUMENT


async def test_queue_survives_a_sigkill_of_matchmaking(mm: MatchmakingClient, mm_platform: Platform) -> None:
    four = await players(mm, 4, "r")
    for p in four[:3]:
        await mm.enqueue(p, "classic")
    waiters = [asyncio.create_task(mm.wait_match(p, WAIT)) for p in four[:3]]  # reconnect across the restart
    await asyncio.sleep(0.5)
    service = mm_platform.processes["matchmaking"]
    await service.kill()
    # Restarted with a long small-table wait: a restart slower than the module's 8 s (a loaded machine)
    # must not let the three form a table of their own before the fourth comes.
    service.env["MATCHMAKING_SMALL_TABLE_WAIT_S"] = "120"
    try:
        await service.start()
        assert [(await status(mm, p)).position for p in four[:3]] == [1, 2, 3]
        await mm.enqueue(four[3], "classic")
        seats = [*await asyncio.gather(*waiters), await mm.wait_match(four[3], WAIT)]
        one_table(seats)
        assert sorted(s.seat for s in seats) == [0, 1, 2, 3]
    finally:  # the module's wait again, for the tests after this one
        service.env["MATCHMAKING_SMALL_TABLE_WAIT_S"] = str(SMALL_WAIT_S)
        await service.stop()
        await service.start()


async def test_small_tables_after_the_wait_and_bot_fill(mm: MatchmakingClient) -> None:
    pair = await players(mm, 2, "sp")
    (solo,) = await players(mm, 1, "solo")
    for p in pair:
        await mm.enqueue(p, "speed")
    await mm.enqueue(solo, "duel", bot_fill=True)
    early = await status(mm, pair[0])
    assert early.status == "waiting" and 0 < early.estimated_wait_ms <= SMALL_WAIT_S * 1000
    seats = [await mm.wait_match(p, SMALL_WAIT_S + WAIT) for p in pair]
    one_table(seats)
    assert len(seats[0].match.seats) == 2 and seats[0].match.mode == "speed"
    duel = (await mm.wait_match(solo, SMALL_WAIT_S + WAIT)).match
    assert duel.mode == "duel" and not duel.rated
    assert [(s.display_name, s.is_bot) for s in duel.seats[1:]] == [("bot-1", True), ("bot-2", True)]


async def test_custom_table_hosted_joined_and_started_by_its_host(
    mm: MatchmakingClient, table: table_pb2_grpc.TableServiceStub
) -> None:
    host, guest1, guest2 = await players(mm, 3, "c")
    settings = {"starting_cash": 20000, "speed_die": True}
    lobby = await mm.host_custom(host, json.dumps(settings), seats=3)
    assert lobby.status == "open" and "$20,000" in lobby.rule_card
    bad = await refused(mm.host_custom(guest1, json.dumps({"starting_cash": 1})))
    assert bad.code() == grpc.StatusCode.INVALID_ARGUMENT and rule_id(bad) == "X5"
    bad = await refused(mm.host_custom(guest1, "{}", seats=9))
    assert bad.code() == grpc.StatusCode.INVALID_ARGUMENT and rule_id(bad) == "X5"
    listed = await mm.list_tables()
    assert [lb.rule_card for lb in listed.lobbies if lb.lobby_id == lobby.lobby_id] == [lobby.rule_card]
    await mm.join_custom(guest1, lobby.lobby_id)
    joined = await mm.join_custom(guest2, lobby.lobby_id)
    assert [m.player_id for m in joined.members] == [host.player_id, guest1.player_id, guest2.player_id]
    exc = await refused(mm.start_custom(guest1, lobby.lobby_id))
    assert exc.code() == grpc.StatusCode.PERMISSION_DENIED
    started = await mm.start_custom(host, lobby.lobby_id)
    assert started.status == "started" and started.match.seat == 0 and started.match.seat_token
    table_id = started.match.table_id
    guests = [await mm.my_seat(g) for g in (guest1, guest2)]
    assert [(g.table_id, g.seat) for g in guests] == [(table_id, 1), (table_id, 2)]
    view = await table.GetTable(table_pb2.GetTableRequest(table_id=table_id), timeout=10)
    assert view.mode == "custom" and json.loads(view.state_json)["players"][0]["cash"] == 20000
    listed = await mm.list_tables()
    assert lobby.lobby_id not in [lb.lobby_id for lb in listed.lobbies]
    (running,) = [r for r in listed.running if r.table_id == table_id]
    assert running.rule_card == lobby.rule_card
    claims = auth.verify(token_secret(), running.spectator_token)
    assert (claims.table_id, claims.role) == (table_id, "spectator")


async def test_matchers_racing_never_double_book(
    mm: MatchmakingClient, mm_platform: Platform, server_urls: tuple[str, str]
) -> None:
    """Two more matchers in this process race the service's own over the same queue (SKIP LOCKED)."""
    pool = await db.create_pool(server_urls[1], max_size=4, schema="matchmaking")
    channel = platform_channel(mm_platform.table_target)
    extra = [
        Matchmaker(pool, table_pb2_grpc.TableServiceStub(channel), token_secret(), Rules(small_table_wait_s=1e6))
        for _ in range(2)
    ]
    crowd = await players(mm, 16, "race")
    stop = asyncio.Event()

    async def race(m: Matchmaker) -> None:
        while not stop.is_set():
            await m.match_once()
            await asyncio.sleep(0.01)

    racers = [asyncio.create_task(race(m)) for m in extra]
    try:
        await asyncio.gather(*(mm.enqueue(p, "classic") for p in crowd))
        deadline = time.monotonic() + WAIT
        while True:  # until fewer than a table's start size wait (5 + 5 + 5 leaves one)
            waiting = [p for p in crowd if (await status(mm, p)).status == "waiting"]
            if len(waiting) < 4:
                break
            assert time.monotonic() < deadline, f"{len(waiting)} still waiting"
            await asyncio.sleep(0.2)
    finally:
        stop.set()
        await asyncio.gather(*racers)
    for p in waiting:
        await mm.cancel(p)
    matched = [p for p in crowd if (await status(mm, p)).status == "matched"]
    seats = [await mm.wait_match(p, WAIT) for p in matched]
    async with pool.acquire() as conn:
        rows = await conn.fetch(
            "SELECT player_id, count(*) AS n FROM match_seats WHERE player_id = ANY($1::text[]) GROUP BY player_id",
            [p.player_id for p in crowd],
        )
    await channel.close()
    await pool.close()
    assert len(matched) >= 12
    assert sorted(r["player_id"] for r in rows) == sorted(p.player_id for p in matched)
    assert {r["n"] for r in rows} == {1}
    assert all(4 <= sum(s.table_id == x.table_id for s in seats) <= 5 for x in seats)


async def test_R4_one_matcher_at_a_time_takes_a_modes_whole_queue(
    mm: MatchmakingClient, mm_platform: Platform, server_urls: tuple[str, str]
) -> None:
    """While one instance matches a mode (holding its turn), no other forms tables of that mode: two
    matchers each holding part of a queue would each form small tables, and could leave one player
    with nobody to sit with."""
    pool = await db.create_pool(server_urls[1], max_size=2, schema="matchmaking")
    channel = platform_channel(mm_platform.table_target)
    other = Matchmaker(pool, table_pb2_grpc.TableServiceStub(channel), token_secret(), Rules())
    four = await players(mm, 4, "turn")
    try:
        async with pool.acquire() as holder, holder.transaction():
            assert await store.take_mode(holder, "classic")  # an instance in the middle of its pass
            for p in four:
                await mm.enqueue(p, "classic")
            assert await other.match_once() == 0
            await asyncio.sleep(1.0)  # five of the service's own ticks
            assert [(await status(mm, p)).status for p in four] == ["waiting"] * 4
        seats = [await mm.wait_match(p, WAIT) for p in four]  # the turn handed back: one table of four
    finally:
        await channel.close()
        await pool.close()
    assert len({s.table_id for s in seats}) == 1


async def test_reconciliation_finishes_live_matches_whose_table_ended_unseen_or_never_existed(
    mm_platform: Platform, server_urls: tuple[str, str], table: table_pb2_grpc.TableServiceStub
) -> None:
    """R4: a match whose GameEnded never reached matchmaking (lost in an outage) or whose table the
    table service does not know is finished by reconciliation, its players free again."""
    reply = await table.CreateTable(table_pb2.CreateTableRequest(mode="classic", players=["ann", "bob"], seed=9))
    ended = reply.table_id
    tokens = await join_seats(table, ended, 2)
    actor = (await table_state(table, ended)).actor
    await table.SubmitCommand(
        table_pb2.SubmitCommandRequest(
            table_id=ended, seat_token=tokens[actor], command=command_to_proto(Surrender(actor))
        ),
        timeout=30,
    )
    assert (await table_state(table, ended)).finished
    unknown = "gone-" + uuid.uuid4().hex[:8]
    pool = await db.create_pool(server_urls[1], max_size=2, schema="matchmaking")
    channel = platform_channel(mm_platform.table_target)
    try:
        async with pool.acquire() as conn:
            for table_id in (ended, unknown):  # recorded live, as a formed match is
                await conn.execute(
                    "INSERT INTO matches (table_id, mode, kind, rated, rule_card) "
                    "VALUES ($1, 'classic', 'queue', false, '')",
                    table_id,
                )
        matcher = Matchmaker(pool, table_pb2_grpc.TableServiceStub(channel), token_secret(), Rules())
        await matcher.reconcile()
        async with pool.acquire() as conn:
            rows = {
                r["table_id"]: (r["status"], r["winner"])
                for r in await conn.fetch(
                    "SELECT table_id, status, winner FROM matches WHERE table_id = ANY($1::text[])", [ended, unknown]
                )
            }
        assert rows == {ended: ("finished", 1 - actor), unknown: ("finished", -1)}
    finally:
        await channel.close()
        await pool.close()


async def test_many_waiting_read_their_lines_from_one_snapshot_and_their_watchers_get_their_match(
    mm: MatchmakingClient, mm_platform: Platform, server_urls: tuple[str, str]
) -> None:
    """Parties of two whose second member comes later: the first members wait in line, every status
    of them from one shared read of the queue; once the partners come, each watcher gets its match."""
    n = 24
    firsts, partners = await players(mm, n, "half"), await players(mm, n, "mate")
    parties = [uuid.uuid4().hex for _ in range(n)]
    replies = [await mm.enqueue(p, "classic", party, 2) for p, party in zip(firsts, parties, strict=True)]
    # each Enqueue answers with its own ticket, behind the ones queued before it
    assert all(r.status == "waiting" for r in replies)
    assert [r.position - replies[0].position for r in replies] == list(range(n))

    pool = await db.create_pool(server_urls[1], max_size=4, schema="matchmaking")
    channel = platform_channel(mm_platform.table_target)
    reader = Matchmaker(pool, table_pb2_grpc.TableServiceStub(channel), token_secret(), Rules())
    try:
        statuses = await asyncio.gather(*(reader.status(p.player_id) for p in firsts))
        assert reader.queue_view("classic").reads == 1  # 24 readers at once: one read of the queue
        async with pool.acquire() as conn:
            queued = await conn.fetchval("SELECT count(*) FROM tickets WHERE mode = 'classic' AND status = 'waiting'")
    finally:
        reader.stop()
        await pool.close()
        await channel.close()
    assert [s.ticket_id for s in statuses] == [r.ticket_id for r in replies]
    assert [s.position for s in statuses] == [r.position for r in replies]
    assert {s.waiting for s in statuses} == {queued} and statuses[-1].position <= queued

    # Watchers of every first member, each shown its place in line before the partners come.
    streams = [mm.stub.WatchQueue(matchmaking_pb2.WatchQueueRequest(player_token=p.token)) for p in firsts]
    try:
        first_messages = [await s.read() for s in streams]
        assert [m.position for m in first_messages] == [r.position for r in replies]
        await asyncio.gather(*(mm.enqueue(p, "classic", party, 2) for p, party in zip(partners, parties, strict=True)))

        async def matched(stream: grpc.aio.UnaryStreamCall) -> matchmaking_pb2.QueueStatus:  # type: ignore[type-arg]
            while True:
                message = await stream.read()
                assert message is not grpc.aio.EOF, "the watch ended before the match"
                if message.status != "waiting":
                    return message  # type: ignore[no-any-return]

        final = await asyncio.wait_for(asyncio.gather(*(matched(s) for s in streams)), WAIT)
    finally:
        for s in streams:
            s.cancel()
    assert {m.status for m in final} == {"matched"}
    mates = [await mm.wait_match(p, WAIT) for p in partners]
    for first, watched, mate in zip(firsts, final, mates, strict=True):
        assert watched.match.table_id == mate.table_id  # a party sits at one table
        assert watched.match.seats[watched.match.seat].player_id == first.player_id
        claims = auth.verify(token_secret(), watched.match.seat_token)
        assert (claims.table_id, claims.seat, claims.player) == (mate.table_id, watched.match.seat, first.player_id)
    # two parties of two at a classic table (or one alone, if it waited the small-table wait first)
    for m in final:
        assert len(m.match.seats) in (2, 4)
        assert sum(x.match.table_id == m.match.table_id for x in final) == len(m.match.seats) // 2


async def test_a_crowd_queued_at_once_is_all_seated_once(mm: MatchmakingClient) -> None:
    crowd = await players(mm, 30, "crowd")
    replies = await asyncio.gather(*(mm.enqueue(p, "speed", bot_fill=True) for p in crowd))
    assert {r.status for r in replies} <= {"waiting", "matched"}
    seats = await asyncio.gather(*(mm.wait_match(p, SMALL_WAIT_S + WAIT) for p in crowd))
    by_table: dict[str, list[SeatTicket]] = {}
    for s in seats:
        by_table.setdefault(s.table_id, []).append(s)
        assert s.match.seats[s.seat].player_id == s.player.player_id
    # every player at one seat of one table; no seat given twice
    assert len({(s.table_id, s.seat) for s in seats}) == len(crowd)
    ours = {p.player_id for p in crowd}
    for table_seats in by_table.values():
        match = table_seats[0].match
        assert match.mode == "speed" and 2 <= len(match.seats) <= 5
        humans = {x.player_id for x in match.seats if not x.is_bot}
        assert {s.player.player_id for s in table_seats} == humans & ours
