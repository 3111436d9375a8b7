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
