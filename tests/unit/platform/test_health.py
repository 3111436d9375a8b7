"""Health tells the truth about a Postgres that stalls: NOT_SERVING at the check's timeout, however long
the stuck connection takes to give back, and one check at a time holds a connection."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from typing import Any

from servicekit.health import postgres_up


class StalledPool:
    """A pool whose server answers nothing until `answer` is set, giving its connections back as late."""

    def __init__(self) -> None:
        self.answer = asyncio.Event()
        self.acquired = 0

    @contextlib.asynccontextmanager
    async def acquire(self) -> AsyncIterator[Any]:
        self.acquired += 1
        try:
            yield self
        finally:
            await self.answer.wait()  # the release waits for the server too

    async def fetchval(self, query: str) -> int:
        await self.answer.wait()
        return 1


async def test_a_stalled_postgres_is_away_at_the_timeout_and_checked_by_one_connection_at_a_time() -> None:
    pool = StalledPool()
    started = time.monotonic()
    async with asyncio.timeout(2.0):  # a check that waited for the stuck connection would never end
        assert not await postgres_up(pool, timeout=0.1)  # type: ignore[arg-type]
        assert not await postgres_up(pool, timeout=0.1)  # type: ignore[arg-type]
    assert time.monotonic() - started < 1.0
    assert pool.acquired == 1  # the second check waited on the first one's, not on another connection
    pool.answer.set()
    assert await postgres_up(pool, timeout=1.0)  # type: ignore[arg-type]
