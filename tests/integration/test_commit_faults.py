"""A table's commits when the connection to Postgres fails around them (real Postgres, faults injected
at the connection): the actor never runs ahead of Postgres, an unknown outcome is read back before
anything else, seqs stay contiguous and the state in memory equals the replay of the rows."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from bots.heuristic import HeuristicBot
from engine import RuleViolation, apply, codec, replay
from servicekit import db
from servicekit.errors import Corrupt, Unavailable
from services.table import store
from services.table import tables as tables_module
from services.table.commits import GroupCommitter, NotSent
from services.table.tables import TableActor, Tables

pytestmark = pytest.mark.integration

MIGRATIONS = Path(__file__).parents[2] / "services" / "table" / "migrations"
_ids = itertools.count(1)


class FlakyPool:
    """The service's pool, with Postgres "down" (every acquire refused) while `down` is set."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool
        self.down = False
        self.refused = 0

    def acquire(self) -> Any:
        if self.down:
            self.refused += 1
            raise ConnectionRefusedError(111, "Connection refused")
        return self.pool.acquire()

    async def release(self, conn: asyncpg.Connection) -> None:
        await self.pool.release(conn)

    async def expire_connections(self) -> None:
        await self.pool.expire_connections()


@pytest.fixture(scope="module")
async def raw_pool(server_urls: tuple[str, str]) -> AsyncIterator[asyncpg.Pool]:
    pool = await db.create_pool(server_urls[1], min_size=1, max_size=4, schema="commit_faults")
    await db.migrate(pool, "table", MIGRATIONS)
    try:
        yield pool
    finally:
        await pool.close()


@pytest.fixture
async def tables(raw_pool: asyncpg.Pool) -> AsyncIterator[Tables]:
    t = Tables(FlakyPool(raw_pool), snapshot_every=40)  # type: ignore[arg-type]
    try:
        yield t
    finally:
        await t.stop()


def flaky(t: Tables) -> FlakyPool:
    assert isinstance(t.pool, FlakyPool)
    return t.pool


async def new_table(t: Tables, seed: int) -> TableActor:
    table_id = (await t.create("classic", ["ann", "bob", "cy"], seed, {}, 1)).table_id
    return t.actors[table_id]


async def play(actor: TableActor, bot: HeuristicBot, moves: int) -> None:
    """`moves` commands chosen by a bot for whoever acts, each with a fresh command id."""
    for _ in range(moves):
        state = actor.state
        if state.finished:
            return
        command = bot.choose(state, state.actor)
        try:
            await actor.submit(command, f"c{next(_ids)}", None)
        except RuleViolation:
            continue


async def assert_matches_postgres(t: Tables, actor: TableActor) -> list[int]:
    """The rows' seqs are 1..n, the table row says n, and memory equals replay(rows)."""
    async with t.pool.acquire() as conn:
        rows = await conn.fetch(
            "SELECT seq, envelope, payload FROM table_events WHERE table_id = $1 ORDER BY seq", actor.table_id
        )
        row_seq = await conn.fetchval("SELECT seq FROM tables WHERE table_id = $1", actor.table_id)
    seqs = [r["seq"] for r in rows]
    assert seqs == list(range(1, len(rows) + 1)), "a gap in table_events"
    assert row_seq == len(rows) == actor.state.seq
    replayed = replay(tables_module.stored_events(rows))
    assert codec.state_to_data(replayed) == codec.state_to_data(actor.state)
    return seqs


def fail_append(monkeypatch: pytest.MonkeyPatch, *, commit_first: bool, times: int = 1) -> list[int]:
    """The next `times` commits lose their connection, after the statement committed or before."""
    real = store.append_many
    failed: list[int] = []

    async def append_many(conn: asyncpg.Connection, commits: list[store.AppendArgs]) -> None:
        if len(failed) < times:
            failed.append(commits[0].seqs[0])
            if commit_first:
                await real(conn, commits)
            raise asyncpg.ConnectionDoesNotExistError("connection was closed in the middle of operation")
        await real(conn, commits)

    monkeypatch.setattr(tables_module.store, "append_many", append_many)
    return failed


async def test_a_commit_lost_after_it_committed_is_answered_from_postgres(
    tables: Tables, monkeypatch: pytest.MonkeyPatch
) -> None:
    actor = await new_table(tables, seed=7)
    bot = HeuristicBot(7)
    await play(actor, bot, 10)
    failed = fail_append(monkeypatch, commit_first=True)
    state = actor.state
    command = bot.choose(state, state.actor)
    answer = await actor.submit(command, "lost-after", None)  # answered, not refused: it did commit
    assert failed == [state.seq + 1]
    assert not actor.unsure
    assert actor.state.seq > state.seq
    # A retry of the same command id is answered as the first time and changes nothing.
    assert await actor.submit(command, "lost-after", None) == answer
    await play(actor, bot, 20)
    await assert_matches_postgres(tables, actor)


async def test_a_commit_lost_before_it_committed_changes_nothing_and_can_be_retried(
    tables: Tables, monkeypatch: pytest.MonkeyPatch
) -> None:
    actor = await new_table(tables, seed=8)
    bot = HeuristicBot(8)
    await play(actor, bot, 10)
    fail_append(monkeypatch, commit_first=False)
    before = codec.state_to_data(actor.state)
    state = actor.state
    command = bot.choose(state, state.actor)
    with pytest.raises(Unavailable):
        await actor.submit(command, "lost-before", None)
    assert codec.state_to_data(actor.state) == before  # never ahead of Postgres
    await assert_matches_postgres(tables, actor)
    await actor.submit(command, "lost-before", None)  # the retry commits it, once
    await play(actor, bot, 20)
    await assert_matches_postgres(tables, actor)


async def test_while_postgres_stays_away_the_table_waits_then_resolves_and_plays_on(
    tables: Tables, monkeypatch: pytest.MonkeyPatch
) -> None:
    actor = await new_table(tables, seed=9)
    bot = HeuristicBot(9)
    await play(actor, bot, 10)
    pool = flaky(tables)
    real = store.append_many

    async def append_then_go_down(conn: asyncpg.Connection, commits: list[store.AppendArgs]) -> None:
        monkeypatch.setattr(tables_module.store, "append_many", real)
        await real(conn, commits)
        pool.down = True  # Postgres dies as it commits: the answer never arrives
        raise ConnectionResetError(104, "Connection reset by peer")

    monkeypatch.setattr(tables_module.store, "append_many", append_then_go_down)
    state = actor.state
    pending = asyncio.create_task(actor.submit(bot.choose(state, state.actor), "in-doubt", None))
    await wait_for(lambda: pool.refused >= 3)  # the actor retries reading the outcome, with backoff
    assert not pending.done()
    assert actor.unsure
    with pytest.raises(Unavailable):  # others are told to come back, not queued behind the outage
        await actor.submit(bot.choose(state, state.actor), "meanwhile", None)
    assert actor.state.seq == state.seq  # nothing applied meanwhile
    pool.down = False
    answer = await asyncio.wait_for(pending, 30)
    assert answer  # it had committed: answered as Postgres says
    assert actor.state.seq > state.seq
    await play(actor, bot, 20)
    await assert_matches_postgres(tables, actor)


async def test_a_refused_connection_answers_unavailable_and_the_timers_fire_after_recovery(
    tables: Tables,
) -> None:
    actor = await new_table(tables, seed=10)
    bot = HeuristicBot(10)
    await play(actor, bot, 10)
    pool = flaky(tables)
    pool.down = True
    state = actor.state
    with pytest.raises(Unavailable):
        await actor.submit(bot.choose(state, state.actor), "refused", None)
    assert actor.state is state
    # The clock is due meanwhile: the table waits for Postgres with backoff (a handful of tries, no spin).
    actor.wake()
    await asyncio.sleep(1.0)
    assert pool.refused < 12, pool.refused
    pool.down = False
    await wait_for(lambda: not actor.unsure)
    await actor.submit(bot.choose(actor.state, actor.state.actor), "refused", None)
    await play(actor, bot, 20)
    await assert_matches_postgres(tables, actor)


async def test_many_faults_in_a_row_leave_no_gap_and_replay_equal(
    tables: Tables, monkeypatch: pytest.MonkeyPatch
) -> None:
    actor = await new_table(tables, seed=11)
    bot = HeuristicBot(11)
    for round_ in range(8):
        fail_append(monkeypatch, commit_first=round_ % 2 == 0)
        with contextlib.suppress(Unavailable):
            await play(actor, bot, 3)
        await play(actor, bot, 5)
    await assert_matches_postgres(tables, actor)


async def test_a_table_with_a_gap_is_refused_as_corrupt_not_run(tables: Tables) -> None:
    actor = await new_table(tables, seed=12)
    await play(actor, HeuristicBot(12), 30)
    table_id = actor.table_id
    await actor.stop()
    del tables.actors[table_id]
    async with tables.pool.acquire() as conn:  # what the old commit path left behind: a missing seq
        await conn.execute("UPDATE tables SET snapshot = NULL, snapshot_seq = 0 WHERE table_id = $1", table_id)
        await conn.execute("DELETE FROM table_events WHERE table_id = $1 AND seq = 5", table_id)
    with pytest.raises(Corrupt, match="missing"):
        await tables.get(table_id)
    assert table_id not in tables.actors


async def test_a_table_whose_first_events_fail_leaves_no_row(tables: Tables, monkeypatch: pytest.MonkeyPatch) -> None:
    async def refuse(*args: Any, **kw: Any) -> None:
        raise asyncpg.CheckViolationError("refused")

    monkeypatch.setattr(tables_module.store, "append_many", refuse)
    async with tables.pool.acquire() as conn:
        before = await conn.fetchval("SELECT count(*) FROM tables")
    with pytest.raises(asyncpg.CheckViolationError):
        await tables.create("classic", ["ann", "bob"], 5, {}, 1)
    async with tables.pool.acquire() as conn:
        assert await conn.fetchval("SELECT count(*) FROM tables") == before


async def wait_for(predicate: Callable[[], bool], timeout: float = 30.0) -> None:
    async def poll() -> None:
        while not predicate():
            await asyncio.sleep(0.01)

    await asyncio.wait_for(poll(), timeout)


def next_commit(actor: TableActor, bot: HeuristicBot, command_id: str) -> store.AppendArgs:
    """The commit the actor would make for the bot's next move (not applied in memory)."""
    state = actor.state.copy()
    first = state.seq + 1
    events = apply(state, bot.choose(state, state.actor))
    p = actor._prepare(state, first, events, command_id)
    return store.append_args(
        actor.table_id, first, events, p.encoded, state.clock, state, p.snapshot, p.outbox, command_id, p.answer
    )


async def event_seqs(pool: asyncpg.Pool, table_id: str) -> list[int]:
    async with pool.acquire() as conn:
        rows = await conn.fetch("SELECT seq FROM table_events WHERE table_id = $1 ORDER BY seq", table_id)
    return [r["seq"] for r in rows]


async def test_commits_of_many_tables_go_in_groups_and_each_table_matches_postgres(
    tables: Tables, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = store.append_many
    sizes: list[int] = []

    async def counted(conn: asyncpg.Connection, commits: list[store.AppendArgs]) -> None:
        sizes.append(len(commits))
        await real(conn, commits)

    monkeypatch.setattr(tables_module.store, "append_many", counted)
    actors = [await new_table(tables, seed=100 + i) for i in range(8)]
    await asyncio.gather(*(play(a, HeuristicBot(100 + i), 30) for i, a in enumerate(actors)))
    assert max(sizes) > 1, sizes  # commands of several tables shared a commit
    assert sum(sizes) >= 8 * 25
    for actor in actors:
        await assert_matches_postgres(tables, actor)


async def test_a_group_is_atomic_and_a_refused_commit_fails_alone(tables: Tables, raw_pool: asyncpg.Pool) -> None:
    ann, bob, cy = [await new_table(tables, seed=200 + i) for i in range(3)]
    good = next_commit(ann, HeuristicBot(1), "g1")
    bad = next_commit(bob, HeuristicBot(2), "b1")._replace(seqs=[1])  # seq 1 is there: refused
    other = next_commit(cy, HeuristicBot(3), "g2")
    before = {a.table_id: await event_seqs(raw_pool, a.table_id) for a in (ann, bob, cy)}
    # One group: all of it or nothing.
    async with raw_pool.acquire() as conn:
        with pytest.raises(asyncpg.UniqueViolationError):
            await store.append_many(conn, [good, bad])
    assert await event_seqs(raw_pool, ann.table_id) == before[ann.table_id]
    # Through the committer: the group is refused, then its commits are tried one by one.
    committer = GroupCommitter(raw_pool)
    try:
        results = await asyncio.gather(
            committer.append(good), committer.append(bad), committer.append(other), return_exceptions=True
        )
    finally:
        await committer.stop()
    assert results[0] is None and results[2] is None, results
    assert isinstance(results[1], asyncpg.UniqueViolationError)
    assert await event_seqs(raw_pool, ann.table_id) == before[ann.table_id] + good.seqs
    assert await event_seqs(raw_pool, cy.table_id) == before[cy.table_id] + other.seqs
    assert await event_seqs(raw_pool, bob.table_id) == before[bob.table_id]


async def test_a_group_whose_connection_is_refused_was_not_sent(raw_pool: asyncpg.Pool, tables: Tables) -> None:
    actor = await new_table(tables, seed=300)
    pool = FlakyPool(raw_pool)
    pool.down = True
    committer = GroupCommitter(pool)  # type: ignore[arg-type]
    try:
        with pytest.raises(NotSent):
            await committer.append(next_commit(actor, HeuristicBot(4), "n1"))
    finally:
        await committer.stop()


async def test_e2_the_clock_stands_still_while_the_table_cannot_be_saved(tables: Tables) -> None:
    """E2: a player is not timed out for the platform's outage. At clock scale 100 the turn timer
    (75 s, E1) runs out in 0.75 s; Postgres is away 3 s (four timers' worth, beyond the three missed
    turns that bankrupt, E2): once it is back, the turn goes on with the time it had left, and a table
    read again (another instance, a restart) runs the same clock."""
    table_id = (await tables.create("classic", ["ann", "bob", "cy"], 11, {}, 100)).table_id
    actor = tables.actors[table_id]
    bot = HeuristicBot(11)
    await play(actor, bot, 3)
    pool = flaky(tables)
    pool.down = True
    with pytest.raises(Unavailable):  # the first commit refused: the outage begins for this table
        await actor.submit(bot.choose(actor.state, actor.state.actor), "refused", None)
    seq, clock = actor.state.seq, actor.state.clock
    await asyncio.sleep(3.0)  # the turn timer comes due meanwhile: the actor waits for Postgres
    pool.down = False
    await wait_for(lambda: not actor.unsure and actor.outage_since is None)
    assert actor.stopped_ms >= 3000
    assert actor.game_now() - clock < 75_000, "game time ran on through the outage"
    rows = await event_rows_since(tables, table_id, seq)
    assert "TurnTimedOut" not in rows, rows
    async with tables.pool.acquire() as conn:
        row = await store.table(conn, table_id)
    assert row is not None and row.clock_stopped_ms == actor.stopped_ms  # recorded for the next reader
    await actor.stop()
    del tables.actors[table_id]
    again = await tables.get(table_id)
    assert again is not actor and again.stopped_ms == actor.stopped_ms
    assert abs(again.game_now() - actor.game_now()) < 1_000
    await play(again, bot, 10)
    await assert_matches_postgres(tables, again)


async def event_rows_since(t: Tables, table_id: str, seq: int) -> list[str]:
    async with t.pool.acquire() as conn:
        rows = await conn.fetch("SELECT type FROM table_events WHERE table_id = $1 AND seq > $2", table_id, seq)
    return [r["type"] for r in rows]


async def test_a_group_is_written_in_the_order_the_lease_heartbeat_locks_in(
    tables: Tables, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each commit's fence share-locks its partition's lease row until the group commits, and the lease
    heartbeat locks its rows in partition order: a group written in that order waits for a renewal
    or is waited for, never deadlocks with it (`GroupCommitter.order`)."""
    real = store.append_many
    groups: list[list[int]] = []

    def key(args: store.AppendArgs) -> int:
        return int(args.table_id, 16) % 97  # any order the heartbeat would share

    async def recorded(conn: asyncpg.Connection, commits: list[store.AppendArgs]) -> None:
        groups.append([key(c) for c in commits])
        await real(conn, commits)

    monkeypatch.setattr(tables_module.store, "append_many", recorded)
    tables.committer.order = key
    actors = [await new_table(tables, seed=400 + i) for i in range(8)]
    await asyncio.gather(*(play(a, HeuristicBot(400 + i), 20) for i, a in enumerate(actors)))
    several = [g for g in groups if len(g) > 1]
    assert several, groups  # groups of several tables were written
    assert all(g == sorted(g) for g in groups), [g for g in groups if g != sorted(g)]
    for actor in actors:
        await assert_matches_postgres(tables, actor)
