"""Group commit: the commands of many tables that arrive while a commit is under way are written
together, in one atomic `executemany` (one round trip, one WAL flush), and each is answered only
once that whole group is in Postgres. Durability is unchanged; the per-commit cost is shared.

A table's actor hands its commit (`store.append_args`) to `GroupCommitter.append`
and waits. `COMMITTERS` loops take whatever is waiting when they are free, up to `max_batch`
commits: at low load a group is one commit and nothing waits for a window; under load the groups
grow by themselves. What can go wrong is told apart, because the actor's recovery differs:

* `NotSent`: no connection could be had; nothing reached Postgres.
* `OutcomeUnknown`: the connection was lost while the group ran: every commit of the group is
  uncertain (all or none committed), and each actor reads its table back (`TableActor._resync`).
* any other error (Postgres refused a statement: a command id answered before, say) rolls the
  whole group back; its commits are then tried one by one, so only the one at fault sees it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field

import asyncpg
from prometheus_client import Histogram

from servicekit.errors import unreachable

from . import store

log = logging.getLogger(__name__)

BATCH_SIZE = Histogram(
    "table_commit_group_commits",
    "Commits written together in one group commit",
    buckets=(1, 2, 4, 8, 16, 32, 64, 128, 256),
)
GROUP_SECONDS = Histogram(
    "table_commit_group_seconds",
    "A group commit's write: its connection taken, its statements and their transaction in Postgres",
    buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0),
)
#: Group commits in flight at once (each on its own connection): one fills while another is written.
COMMITTERS = 2


class NotSent(Exception):
    """No connection: nothing was sent to Postgres."""


class OutcomeUnknown(Exception):
    """The connection was lost while the group ran: committed entirely or not at all, unknown which."""


@dataclass
class _Pending:
    args: store.AppendArgs
    done: asyncio.Future[None] = field(default_factory=lambda: asyncio.get_running_loop().create_future())


class GroupCommitter:
    def __init__(
        self, pool: asyncpg.Pool, max_batch: int = 128, order: Callable[[store.AppendArgs], int] | None = None
    ) -> None:
        self.pool = pool
        self.max_batch = max(1, max_batch)
        #: The order a group's commits are written in (None: as they came): by partition, the order the
        #: lease heartbeat locks its rows in, so a group's fences (FOR SHARE) and a renewal never deadlock.
        self.order = order
        self._waiting: list[_Pending] = []
        self._wake = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []

    def start(self) -> None:
        if not self._tasks:
            self._tasks = [asyncio.create_task(self._run()) for _ in range(COMMITTERS)]

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks = []
        for pending in self._waiting:  # never sent: their actors answer UNAVAILABLE
            if not pending.done.done():
                pending.done.set_exception(NotSent("the table service is stopping"))
        self._waiting = []

    async def append(self, args: store.AppendArgs) -> None:
        """Commit one command's rows with whatever else is waiting; returns once they are in Postgres."""
        self.start()
        pending = _Pending(args)
        self._waiting.append(pending)
        self._wake.set()
        await pending.done

    async def _run(self) -> None:
        while True:
            if not self._waiting:
                self._wake.clear()
                await self._wake.wait()
                continue
            group, self._waiting = self._waiting[: self.max_batch], self._waiting[self.max_batch :]
            if self.order is not None:
                order = self.order
                group.sort(key=lambda pending: order(pending.args))
            await self._commit(group)

    async def _commit(self, group: list[_Pending]) -> None:
        with GROUP_SECONDS.time():  # beside table_commit_seconds (wait included): the write's own share
            await self._write(group)

    async def _write(self, group: list[_Pending]) -> None:
        try:
            conn = await self.pool.acquire()
        except Exception as exc:
            refused = NotSent(f"no connection to Postgres ({type(exc).__name__}: {exc})")
            _fail(group, refused if unreachable(exc) else exc)
            return
        try:
            BATCH_SIZE.observe(len(group))
            try:
                await store.append_many(conn, [p.args for p in group])
            except Exception as exc:
                if unreachable(exc):
                    unknown = OutcomeUnknown(f"connection lost committing ({type(exc).__name__}: {exc})")
                    _fail(group, unknown)
                    await self.pool.expire_connections()  # the others are likely dead too
                    return
                if len(group) == 1:
                    _fail(group, exc)
                    return
                # One commit of the group was refused: the group rolled back; find which, one by one.
                for pending in group:
                    try:
                        await store.append_many(conn, [pending.args])
                    except Exception as single:
                        if unreachable(single):
                            _fail([p for p in group if not p.done.done()], OutcomeUnknown(str(single)))
                            await self.pool.expire_connections()
                            return
                        if not pending.done.done():  # its actor may have stopped waiting
                            pending.done.set_exception(single)
                    else:
                        if not pending.done.done():
                            pending.done.set_result(None)
                return
            for pending in group:
                if not pending.done.done():
                    pending.done.set_result(None)
        finally:
            await self.pool.release(conn)


def _fail(group: list[_Pending], exc: BaseException) -> None:
    for pending in group:
        if not pending.done.done():
            pending.done.set_exception(exc)


__all__ = ["GroupCommitter", "NotSent", "OutcomeUnknown"]
