"""A table-service instance's hold on its id (`services.table.leases`), in this process over a schema
of its own: a lost lock connection is taken again at the next heartbeat, and an id still locked by a
session Postgres has not yet seen die is a heartbeat that failed (tried again), never an exit."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import pytest

from servicekit import db
from services.table.leases import LOCK_NAMESPACE, IdInUse, Leases, Refused

pytestmark = pytest.mark.integration

MIGRATIONS = Path(__file__).parents[2] / "services" / "table" / "migrations"
SCHEMA = "lease_lock"


@pytest.fixture
async def pool(server_urls: tuple[str, str]) -> AsyncIterator[asyncpg.Pool]:
    conn = await asyncpg.connect(server_urls[1])
    try:
        await conn.execute(f"DROP SCHEMA IF EXISTS {SCHEMA} CASCADE")
    finally:
        await conn.close()
    pool = await db.create_pool(server_urls[1], min_size=1, max_size=4, schema=SCHEMA)
    await db.migrate(pool, "table", MIGRATIONS)
    try:
        yield pool
    finally:
        await pool.close()


async def test_an_id_still_locked_when_the_lock_is_taken_again_fails_the_beat_and_is_retaken_later(
    pool: asyncpg.Pool, server_urls: tuple[str, str]
) -> None:
    leases = Leases(pool, server_urls[1], "a", "127.0.0.1:1", partitions=4, ttl_s=5.0)
    await leases.start()
    assert sorted(leases.held) == [0, 1, 2, 3]
    async with pool.acquire() as conn:
        key = await conn.fetchval("SELECT hashtext(current_schema() || '/' || 'a')")
    twin = Leases(pool, server_urls[1], "a", "127.0.0.1:2", partitions=4, ttl_s=5.0)
    with pytest.raises(Refused, match="instance id 'a' is in use by another live instance"):
        await twin.start()  # a second process with the id: it must not start

    # The lock's connection is lost, and an old session (as Postgres may still see it) holds the id.
    assert leases._lock_conn is not None
    await leases._lock_conn.close()
    lingering = await asyncpg.connect(server_urls[1])
    try:
        assert await lingering.fetchval("SELECT pg_try_advisory_lock($1, $2)", LOCK_NAMESPACE, key)
        with pytest.raises(IdInUse):  # an Exception the heartbeat loop logs and retries, not SystemExit
            await leases.beat()
    finally:
        await lingering.close()  # the old session ends: the lock is free again
    await leases.beat()
    assert leases._lock_conn is not None and not leases._lock_conn.is_closed()
    assert sorted(leases.held) == [0, 1, 2, 3]
    await leases.release()


async def test_a_beat_that_fails_midway_forgets_nothing_and_the_next_one_stops_the_lost_tables(
    pool: asyncpg.Pool, server_urls: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another instance took two partitions; the beat that finds them lost fails before it commits
    (Postgres restarted under it). The held leases are as before, nothing was stopped; the next beat
    finds the loss again and stops those tables' actors (`on_lost`): none is left running unowned."""
    from services.table import leases as module

    leases = Leases(pool, server_urls[1], "a", "127.0.0.1:1", partitions=4, ttl_s=5.0)
    stopped: list[list[int]] = []

    async def on_lost(partitions: list[int]) -> None:
        stopped.append(sorted(partitions))

    leases.on_lost = on_lost
    await leases.start()
    assert sorted(leases.held) == [0, 1, 2, 3]
    async with pool.acquire() as conn:
        await conn.execute("UPDATE partition_leases SET owner = 'b', epoch = epoch + 1 WHERE partition IN (0, 1)")
    with monkeypatch.context() as broken:
        broken.setattr(module, "_LIVE", "no_such_column")  # the statement after the renewal fails
        with pytest.raises(asyncpg.PostgresError):
            await leases.beat()
    assert sorted(leases.held) == [0, 1, 2, 3] and stopped == []
    await leases.beat()
    assert stopped == [[0, 1]]
    # 'b' is no live instance: the same beat took them back, under a new epoch (their tables loaded anew)
    assert (leases.held[0], leases.held[1]) == (3, 3)
    await leases.release()


async def test_a_postgres_restart_shorter_than_the_ttl_moves_no_partition(
    pool: asyncpg.Pool, server_urls: tuple[str, str]
) -> None:
    """A restart ends every instance's lock session at once. The first instance to beat after it takes
    its own lock back, but not the partitions of one that has not yet (their leases run on): without
    that, whichever instance beat first took every partition, and every table moved twice."""
    a = Leases(pool, server_urls[1], "a", "127.0.0.1:1", partitions=4, ttl_s=5.0)
    await a.start()
    b = Leases(pool, server_urls[1], "b", "127.0.0.1:2", partitions=4, ttl_s=5.0)
    await b.start()
    await a.beat()  # b is live now: a hands back what is above its fair share, b takes it
    await b.beat()
    before = {"a": dict(a.held), "b": dict(b.held)}
    assert sorted([*before["a"], *before["b"]]) == [0, 1, 2, 3] and before["a"] and before["b"]
    for leases in (a, b):  # Postgres restarted: both lock sessions are gone
        assert leases._lock_conn is not None
        await leases._lock_conn.close()
    await a.beat()
    await b.beat()
    assert {"a": dict(a.held), "b": dict(b.held)} == before  # same partitions, same epochs
    await a.release()
    await b.release()
