"""A mode's waiting queue as one shared snapshot: what every `status` and `WatchQueue` reader reads.

Reading the whole queue per status call (and every watcher calling status on every change) is
O(waiting) database work per reader and O(waiting²) per change: it collapses with thousands
waiting. So each mode's queue is read once into a `Snapshot` (order, positions, the mode's recent
wait), and every reader takes its ticket's line from it in O(1):

* `QueueView.fresh(since)` gives a snapshot whose read began at `since` or later (a caller that
  must see its own write, or anything committed before it asked, passes the time it asked).
  Concurrent callers share one read: a read in flight that began too early is followed by one
  more, which serves them all. Reads are at least `min_interval_s` apart.
* `QueueView.changed()` (a local change: a ticket queued, cancelled, matched) makes the view read
  the queue again soon when someone watches it (`QueueView.watch`). After a read, a watcher whose
  ticket left the queue (matched, cancelled) is woken at once; the others, whose line may have
  moved, at most once per `wake_interval_s`, whatever the rate of changes.

Changes made by another instance are seen at the next read: while anyone watches, the queue is
read at least every `poll_s`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from .queues import Rules, Ticket, estimate_wait_s, queued_players

#: Reads a mode's waiting tickets (oldest first, ratings not needed) and its recent average wait.
Loader = Callable[[str], Awaitable[tuple[Sequence[Ticket], float | None]]]


@dataclass(frozen=True, slots=True)
class Line:
    """A waiting ticket's line in the queue as of the snapshot."""

    position: int  # 1: the longest waiting
    waiting: int  # tickets waiting in the mode
    waited_s: float  # now, not at the read
    estimated_wait_s: float


@dataclass(frozen=True, slots=True)
class Snapshot:
    mode: str
    #: The loop time the read began: it saw everything committed before then.
    started: float
    tickets: dict[str, tuple[int, Ticket]]  # by ticket id: (position, ticket as of the read)
    queued: int  # players in units that could sit at a table (singles, complete parties)
    recent_s: float | None

    def line(self, ticket_id: str, rules: Rules, now: float) -> Line | None:
        """The ticket's line (None: it was not waiting when the snapshot was read)."""
        entry = self.tickets.get(ticket_id)
        if entry is None:
            return None
        position, t = entry
        waited = t.waited_s + max(0.0, now - self.started)
        estimate = estimate_wait_s(self.mode, self.queued, waited, t.bot_fill, rules, self.recent_s)
        return Line(position, len(self.tickets), waited, estimate)


def build(mode: str, started: float, tickets: Sequence[Ticket], recent_s: float | None) -> Snapshot:
    by_id = {t.ticket_id: (i + 1, t) for i, t in enumerate(tickets)}
    return Snapshot(mode, started, by_id, queued_players(tickets), recent_s)


class Watch:
    """One watcher's registration: its ticket, and the event that wakes it."""

    __slots__ = ("event", "ticket_id")

    def __init__(self, ticket_id: str) -> None:
        self.ticket_id = ticket_id
        self.event = asyncio.Event()

    async def wait(self, timeout: float) -> None:
        """Until the view wakes this watcher (or `timeout`)."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.event.wait(), timeout)
        self.event.clear()


class QueueView:
    """One mode's shared snapshot, read again on demand (coalesced), and its watchers woken: at once
    when their ticket left the queue, else when the line moved, at most once per `wake_interval_s`.
    While anyone watches, the queue is read at least every `poll_s` (changes by other instances)."""

    def __init__(
        self,
        mode: str,
        load: Loader,
        min_interval_s: float = 0.2,
        wake_interval_s: float = 1.0,
        poll_s: float = 0.25,
    ) -> None:
        self.mode = mode
        self._load = load
        self.min_interval_s = min_interval_s
        self.wake_interval_s = wake_interval_s
        self.poll_s = poll_s
        self.snapshot: Snapshot | None = None
        self.reads = 0  # how many times the queue was read (for tests and metrics)
        self._loop = asyncio.get_running_loop()
        self._next: asyncio.Future[Snapshot] = self._loop.create_future()
        self._dirty = False
        self._inflight: tuple[float, asyncio.Future[Snapshot]] | None = None  # (began, result)
        self._kick = asyncio.Event()  # wakes a read loop waiting for its next poll
        self._task: asyncio.Task[None] | None = None
        self._last_read = -1e9
        self._watches: set[Watch] = set()
        self._last_wake = -1e9
        self._wake_pending: asyncio.TimerHandle | None = None
        self._closed = False

    @property
    def watchers(self) -> int:
        return len(self._watches)

    async def fresh(self, since: float) -> Snapshot:
        """A snapshot read at `since` or later (one read shared by every caller waiting meanwhile)."""
        s = self.snapshot
        if s is not None and s.started >= since:
            return s
        if self._closed:
            raise RuntimeError("the queue view is closed")
        inflight = self._inflight
        if inflight is not None and inflight[0] >= since:
            return await asyncio.shield(inflight[1])  # the read under way began late enough
        waiter = self._next  # the next read to begin: it begins after `since` (now or later)
        self._request()
        return await asyncio.shield(waiter)

    def changed(self) -> None:
        """A local change to this mode's queue: read it again soon if anyone watches it."""
        if self._watches:
            self._request()

    def watch(self, ticket_id: str) -> Watch:
        """Register a watcher of `ticket_id` (`unwatch` it when done)."""
        w = Watch(ticket_id)
        self._watches.add(w)
        if not self._closed:
            self._request()  # keeps the queue read every `poll_s` while watched
        return w

    def unwatch(self, w: Watch) -> None:
        self._watches.discard(w)

    def close(self) -> None:
        self._closed = True
        if self._task is not None:
            self._task.cancel()
        if self._wake_pending is not None:
            self._wake_pending.cancel()
        self._fail(RuntimeError("the queue view is closed"))
        for w in self._watches:
            w.event.set()

    def _request(self) -> None:
        self._dirty = True
        self._kick.set()
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._reads(), name=f"queue-view-{self.mode}")

    def _fail(self, exc: BaseException) -> None:
        fut, self._next = self._next, self._loop.create_future()
        if not fut.done():
            fut.set_exception(exc)
            fut.exception()  # retrieved: a read nobody waited for is not an unhandled error

    async def _reads(self) -> None:
        try:
            while not self._closed:
                if not self._dirty:
                    if not self._watches:
                        return
                    # Watched: read again after `poll_s` (another instance may have changed the queue),
                    # or at a local change.
                    self._kick.clear()
                    with contextlib.suppress(TimeoutError):
                        remaining = self._last_read + self.poll_s - self._loop.time()
                        await asyncio.wait_for(self._kick.wait(), max(0.0, remaining))
                    if not self._watches and not self._dirty:
                        return
                self._dirty = False
                delay = self._last_read + self.min_interval_s - self._loop.time()
                if delay > 0:
                    await asyncio.sleep(delay)
                # Callers from here on wait for the read after this one.
                fut, self._next = self._next, self._loop.create_future()
                started = self._last_read = self._loop.time()
                self._inflight = started, fut
                try:
                    tickets, recent = await self._load(self.mode)
                except Exception as exc:  # Postgres away: these callers hear of it; the next asks again
                    if not fut.done():
                        fut.set_exception(exc)
                        fut.exception()
                    continue
                finally:
                    self._inflight = None
                snapshot = build(self.mode, started, tickets, recent)
                self.snapshot = snapshot
                self.reads += 1
                if not fut.done():
                    fut.set_result(snapshot)
                self._wake(snapshot)
        except asyncio.CancelledError:
            self._fail(RuntimeError("the queue view is closed"))
            raise

    def _wake(self, snapshot: Snapshot) -> None:
        """Watchers whose ticket left the queue at once; the others at most every `wake_interval_s`."""
        for w in self._watches:
            if w.ticket_id not in snapshot.tickets:
                w.event.set()
        if self._wake_pending is not None:
            return
        delay = self._last_wake + self.wake_interval_s - self._loop.time()
        if delay <= 0:
            self._wake_all()
        else:
            self._wake_pending = self._loop.call_later(delay, self._wake_all)

    def _wake_all(self) -> None:
        self._wake_pending = None
        self._last_wake = self._loop.time()
        for w in self._watches:
            w.event.set()
