"""R4: a table the matcher asked for is never made twice. A CreateTable whose answer was lost leaves an
open attempt: the next pass forms that same table again (the table service hands back the one it
made), even when the queue has changed so that the planner alone would seat the tickets otherwise,
and the tickets cannot be cancelled out from under it. A refusal (the table surely not made) drops the
attempt. Each test has a schema of its own, so the service's own matcher never sees these tickets; the
tables are made by the real table service."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import grpc
import pytest

from client import platform_channel
from client.platform import Platform
from monopoly.v1 import table_pb2, table_pb2_grpc
from servicekit.errors import Unavailable
from servicekit.settings import token_secret
from services.matchmaking import store
from services.matchmaking.main import MIGRATIONS
from services.matchmaking.matcher import ATTEMPT_HOLD_S, Matchmaker
from services.matchmaking.queues import Rules

from .helpers import own_schema

pytestmark = pytest.mark.integration


class Answers:
    """The real table service, whose next `lose` answers are lost after it made the table (a deadline
    on the way back) and whose next `refuse` calls are refused before reaching it."""

    def __init__(self, real: table_pb2_grpc.TableServiceStub) -> None:
        self.real = real
        self.lose = 0
        self.refuse = 0
        self.made: list[str] = []

    async def CreateTable(self, request: table_pb2.CreateTableRequest, **kwargs: Any) -> table_pb2.CreateTableResponse:
        if self.refuse:
            self.refuse -= 1
            raise grpc.aio.AioRpcError(
                grpc.StatusCode.INVALID_ARGUMENT, grpc.aio.Metadata(), grpc.aio.Metadata(), "refused"
            )
        reply: table_pb2.CreateTableResponse = await self.real.CreateTable(request, **kwargs)
        self.made.append(reply.table_id)
        if self.lose:
            self.lose -= 1
            raise grpc.aio.AioRpcError(
                grpc.StatusCode.DEADLINE_EXCEEDED, grpc.aio.Metadata(), grpc.aio.Metadata(), "Deadline Exceeded"
            )
        return reply


@pytest.fixture
async def pool(server_urls: tuple[str, str]) -> AsyncIterator[asyncpg.Pool]:
    async with own_schema(server_urls[1], "matchmaking", MIGRATIONS) as pool:
        yield pool


@pytest.fixture
async def answers(platform: Platform) -> AsyncIterator[Answers]:
    channel = platform_channel(platform.table_target)
    try:
        yield Answers(table_pb2_grpc.TableServiceStub(channel))
    finally:
        await channel.close()


async def register(pool: asyncpg.Pool, n: int) -> list[str]:
    players = [f"p{i}-{uuid.uuid4().hex[:6]}" for i in range(n)]
    async with pool.acquire() as conn:
        for p in players:
            await store.add_player(conn, p, p, False)
    return players


async def queue(pool: asyncpg.Pool, n: int, mode: str = "classic") -> list[str]:
    players = await register(pool, n)
    async with pool.acquire() as conn:
        for p in players:
            await store.add_ticket(conn, f"t-{p}", p, mode, None, 1, False)
    return players


async def tickets(pool: asyncpg.Pool, players: list[str]) -> dict[str, tuple[str, str | None]]:
    async with pool.acquire() as conn:
        rows = await conn.fetch("SELECT player_id, status, table_id FROM tickets WHERE player_id = ANY($1)", players)
    return {r["player_id"]: (r["status"], r["table_id"]) for r in rows}


def queue_matcher(pool: asyncpg.Pool, answers: Answers) -> Matchmaker:
    """A matcher on the test's schema that never starts a table below its start size (no waiting out)."""
    return Matchmaker(pool, answers, token_secret(), Rules(small_table_wait_s=1e6))  # type: ignore[arg-type]


async def open_attempts(pool: asyncpg.Pool) -> int:
    async with pool.acquire() as conn:
        count: int = await conn.fetchval("SELECT count(*) FROM match_attempts")
    return count


async def test_R4_a_lost_create_table_answer_forms_the_same_table_on_the_next_pass(
    pool: asyncpg.Pool, answers: Answers
) -> None:
    matcher = queue_matcher(pool, answers)
    four = await queue(pool, 4)
    answers.lose = 1
    assert await matcher.match_once() == 0  # the table was made, its answer lost
    (first,) = answers.made
    assert {s for s, _ in (await tickets(pool, four)).values()} == {"waiting"}
    assert await open_attempts(pool) == 1
    with pytest.raises(Unavailable):  # a table is being formed for them: they stay queued
        await matcher.cancel(four[0])
    # A fifth player now waits too: planned alone, the five would sit at one new table of five.
    fifth = await queue(pool, 1)
    assert await matcher.match_once() == 1
    assert answers.made == [first, first]  # asked again with the same request id: the same table back
    after = await tickets(pool, four + fifth)
    assert {after[p] for p in four} == {("matched", first)}
    assert after[fifth[0]] == ("waiting", None)
    assert await open_attempts(pool) == 0
    async with pool.acquire() as conn:
        seats = await conn.fetch("SELECT player_id FROM match_seats WHERE table_id = $1 ORDER BY seat", first)
    assert sorted(r["player_id"] for r in seats) == sorted(four)


async def test_R4_a_player_may_leave_a_table_still_being_formed_after_the_hold(
    pool: asyncpg.Pool, answers: Answers
) -> None:
    """The table service not answering for longer than ATTEMPT_HOLD_S does not keep a player queued
    against their will: Cancel goes through, and the next pass drops the attempt (its ticket gone)
    and plans the others anew."""
    matcher = queue_matcher(pool, answers)
    five = await queue(pool, 5)
    answers.lose = 1
    assert await matcher.match_once() == 0
    async with pool.acquire() as conn:
        held = [p for p in five if await store.in_attempt(conn, f"t-{p}", ATTEMPT_HOLD_S)]
        await conn.execute(
            "UPDATE match_attempts SET created_at = created_at - make_interval(secs => $1)", ATTEMPT_HOLD_S + 1
        )
    assert len(held) == 5
    cancelled = await matcher.cancel(held[0])
    assert cancelled.status == "cancelled"
    assert await matcher.match_once() == 1  # the four left, at a new table
    assert await open_attempts(pool) == 0
    left = await tickets(pool, five)
    assert left[held[0]] == ("cancelled", None)
    assert {left[p][0] for p in held[1:]} == {"matched"}
    assert left[held[1]][1] not in answers.made[:1]


async def test_R4_a_refused_create_table_drops_the_attempt_and_the_tickets_are_planned_anew(
    pool: asyncpg.Pool, answers: Answers
) -> None:
    matcher = queue_matcher(pool, answers)
    four = await queue(pool, 4)
    answers.refuse = 1
    assert await matcher.match_once() == 0
    assert answers.made == []
    assert await open_attempts(pool) == 0  # nothing was made: nothing to form again
    five = four + await queue(pool, 1)
    assert await matcher.match_once() == 1  # the five planned anew, at one table
    (table_id,) = answers.made
    assert {s for s in (await tickets(pool, five)).values()} == {("matched", table_id)}
    assert await open_attempts(pool) == 0


async def test_X5_a_custom_table_started_again_after_a_lost_answer_is_the_same_table(
    pool: asyncpg.Pool, answers: Answers
) -> None:
    """The host's StartCustomTable whose answer was lost leaves the lobby open; asked again with the
    same players and settings, it gets the table made the first time (its request id), not a second."""
    matcher = Matchmaker(pool, answers, token_secret(), Rules())  # type: ignore[arg-type]
    host, guest = await register(pool, 2)
    lobby = await matcher.create_lobby(host, "{}", 4)
    await matcher.join_lobby(guest, lobby.lobby_id)
    answers.lose = 1
    with pytest.raises(Unavailable):
        await matcher.start_lobby(host, lobby.lobby_id, bot_fill=True)
    (first,) = answers.made
    view = await matcher.start_lobby(host, lobby.lobby_id, bot_fill=True)
    assert answers.made == [first, first]
    assert (view.status, view.match.table_id) == ("started", first)
