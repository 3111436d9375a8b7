"""Idle table actors leave memory and come back on demand (`Tables.get`).

An actor is evicted when nobody has used it (a command, a read, a join, a watch) for
TABLE_IDLE_EVICT_S (finished tables: TABLE_FINISHED_EVICT_S), it has no watchers, nothing queued
or in hand, and no commit of unknown outcome (`unsure`: it must learn Postgres's answer first).
Everything it held is in Postgres: the state (snapshot and events), the answers to command ids
(`table_commands`), the clock's epoch and scale; a reload replays it and goes on at the next seq.

An unfinished table still has deadlines (E1 turn timer, E2, E5 votes and resumes). Evicting it
keeps `(wall due time, table_id)` on a small heap, and one timer of the loop reloads the table
when the first one comes due: the reloaded actor arms its own timer (already due) and ticks, then
is evicted again as soon as it is idle (a wake-up is not a use), so a table its players left costs
memory only at its deadlines. A table whose next deadline is less than `NEAR_DEADLINE_S` away is
not evicted: it would be read back at once. Tables whose deadline a service keeps (an external
auction or casino) have none here: they come back when the service's result arrives.

TABLE_MAX_TABLES still counts an evicted unfinished table (`dormant`): it comes back at its next
deadline and at every restart (`Tables.recover` loads every unfinished table), so the limit
still bounds the memory and timers one instance may need; a finished table counts for nothing.
"""

from __future__ import annotations

import asyncio
import heapq
import logging
import time
from typing import TYPE_CHECKING

from prometheus_client import Counter, Gauge

from engine import next_deadline

if TYPE_CHECKING:
    from .tables import TableActor, Tables

log = logging.getLogger(__name__)

LOADED = Gauge("table_actors_loaded", "Table actors in memory (finished ones included)")
EVICTIONS = Counter("table_evictions_total", "Idle table actors evicted from memory", ["status"])
RELOADS = Counter("table_wakeups_total", "Evicted unfinished tables read back because a deadline came due")

#: An unfinished table whose next deadline is nearer than this stays: it would be reloaded at once.
NEAR_DEADLINE_S = 1.0
#: The sweep runs this often at most (and a quarter of the shortest idle time at least).
MAX_SWEEP_S = 5.0


class Idle:
    """The eviction sweep and the wake-up heap of one `Tables` (settings <= 0: never evicted)."""

    def __init__(self, tables: Tables, idle_s: float, finished_s: float) -> None:
        self.tables = tables
        self.idle_s = idle_s
        self.finished_s = finished_s
        #: Evicted unfinished tables: they still count toward TABLE_MAX_TABLES.
        self.dormant: set[str] = set()
        self._heap: list[tuple[float, str]] = []  # (wall due time, s; table_id)
        #: Each dormant table's due time: an entry of the heap that is not (evicted again since) is stale.
        self._due: dict[str, float] = {}
        self._wakeup: asyncio.TimerHandle | None = None
        self._sweeper: asyncio.Task[None] | None = None
        self._revivals: set[asyncio.Task[None]] = set()

    @property
    def enabled(self) -> bool:
        return self.idle_s > 0 or self.finished_s > 0

    def start(self) -> None:
        """Start the sweep (idempotent; called when an actor is adopted, inside the running loop)."""
        if self.enabled and self._sweeper is None:
            self._sweeper = asyncio.create_task(self._sweep_forever(), name="table-idle-sweep")

    def adopted(self, table_id: str) -> None:
        """An actor for `table_id` is in memory again (loaded or created)."""
        LOADED.inc()
        self.dormant.discard(table_id)
        self._due.pop(table_id, None)
        self.start()

    async def stop(self) -> None:
        if self._wakeup is not None:
            self._wakeup.cancel()
        tasks = [t for t in (self._sweeper, *self._revivals) if t is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _sweep_forever(self) -> None:
        limits = [s for s in (self.idle_s, self.finished_s) if s > 0]
        period = max(0.05, min(MAX_SWEEP_S, min(limits) / 4))
        while True:
            await asyncio.sleep(period)
            try:
                self.sweep()
            except Exception:  # the sweep must outlive one odd actor
                log.exception("idle sweep failed")

    def sweep(self) -> int:
        """Evict every actor idle long enough; how many were. No await: nothing interleaves."""
        now = time.monotonic()
        evicted = 0
        for actor in list(self.tables.actors.values()):
            if self._evictable(actor, now):
                self._evict(actor)
                evicted += 1
        return evicted

    def _evictable(self, actor: TableActor, now: float) -> bool:
        limit = self.finished_s if actor.state.finished else self.idle_s
        if limit <= 0 or now - actor.used < limit:
            return False
        if actor.watchers or actor.busy or actor.unsure or actor.stalls_unsaved or not actor.queue.empty():
            return False  # (a stall counted and not yet saved would be lost with the actor: E2)
        due = self._due_s(actor)
        return due is None or due - time.time() >= NEAR_DEADLINE_S

    @staticmethod
    def _due_s(actor: TableActor) -> float | None:
        due = next_deadline(actor.state)
        return None if due is None else actor.wall_due_ms(due) / 1000

    def _evict(self, actor: TableActor) -> None:
        table_id = actor.table_id
        del self.tables.actors[table_id]
        actor.retire()
        LOADED.dec()
        finished = actor.state.finished
        EVICTIONS.labels("finished" if finished else "unfinished").inc()
        if finished:
            return
        self.dormant.add(table_id)
        due = self._due_s(actor)
        if due is not None:
            self._push(due, table_id)

    def _push(self, due: float, table_id: str) -> None:
        self._due[table_id] = due
        heapq.heappush(self._heap, (due, table_id))
        self._arm()

    def _current(self, due: float, table_id: str) -> bool:
        """A heap entry still stands: the table is evicted and this is its deadline."""
        return table_id in self.dormant and self._due.get(table_id) == due

    def overdue_s(self) -> float:
        """How late the first evicted table's wake-up is (0: none is): it should be read back within ms."""
        while self._heap and not self._current(*self._heap[0]):  # back in memory, or evicted again since
            heapq.heappop(self._heap)
        return max(0.0, time.time() - self._heap[0][0]) if self._heap else 0.0

    def _arm(self) -> None:
        """One timer of the loop for the heap's first deadline."""
        if self._wakeup is not None:
            self._wakeup.cancel()
            self._wakeup = None
        if self._heap:
            delay = max(0.0, self._heap[0][0] - time.time())
            self._wakeup = asyncio.get_running_loop().call_later(delay, self._wake_due)

    def _wake_due(self) -> None:
        self._wakeup = None
        now = time.time()
        while self._heap and self._heap[0][0] <= now:
            due, table_id = heapq.heappop(self._heap)
            if not self._current(due, table_id):  # back in memory meanwhile (its own timer ticks it), or stale
                if table_id not in self.dormant:
                    self._due.pop(table_id, None)  # its partition went to another instance
                continue
            del self._due[table_id]
            task = asyncio.create_task(self._revive(table_id), name=f"table-wake-{table_id}")
            self._revivals.add(task)
            task.add_done_callback(self._revivals.discard)
        self._arm()

    async def _revive(self, table_id: str) -> None:
        """Read the table back; its actor's timer, already due, ticks it (E1, E2, E5)."""
        RELOADS.inc()
        try:
            await self.tables.get(table_id, touch=False)
        except Exception:
            log.exception("table %s could not be read back for its deadline; retrying in 1 s", table_id)
            if table_id in self.dormant:
                self._push(time.time() + 1.0, table_id)
