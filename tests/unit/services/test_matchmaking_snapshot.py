"""The shared snapshot of a mode's queue (services/matchmaking/snapshot.py): one read serves every
reader waiting meanwhile, a read that began too early is followed by one more, watchers are woken
after a read. A fake loader stands in for Postgres; no servers."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from services.matchmaking.queues import Rules, Ticket
from services.matchmaking.snapshot import QueueView

RULES = Rules(small_table_wait_s=30, tick_ms=200)


def t(n: int, waited: float = 1.0, party: str | None = None, size: int = 1) -> Ticket:
    return Ticket(f"t{n}", f"p{n}", f"name{n}", party, size if party else 1, False, waited)


class Loader:
    """The queue as a list; each read blocks until `release` while `hold` is set."""

    def __init__(self, tickets: list[Ticket]) -> None:
        self.tickets = tickets
        self.reads = 0
        self.hold = False
        self.release = asyncio.Event()
        self.started = asyncio.Event()
        self.fail: Exception | None = None

    async def __call__(self, mode: str) -> tuple[Sequence[Ticket], float | None]:
        self.reads += 1
        self.started.set()
        seen = list(self.tickets)  # what a query that began now sees
        if self.hold:
            await self.release.wait()
        if self.fail is not None:
            raise self.fail
        return seen, 12.0


async def test_concurrent_readers_share_one_read_and_see_their_line() -> None:
    loader = Loader([t(i) for i in range(50)])
    view = QueueView("classic", loader, min_interval_s=0.0)
    since = asyncio.get_running_loop().time()
    snapshots = await asyncio.gather(*(view.fresh(since) for _ in range(200)))
    assert loader.reads == 1 and all(s is snapshots[0] for s in snapshots)
    now = asyncio.get_running_loop().time()
    lines = [snapshots[0].line(f"t{i}", RULES, now) for i in range(50)]
    assert [line.position for line in lines if line] == list(range(1, 51))
    assert {line.waiting for line in lines if line} == {50}
    assert all(line is not None and line.estimated_wait_s == RULES.tick_ms / 1000 for line in lines)
    assert snapshots[0].line("not-there", RULES, now) is None
    view.close()


async def test_a_read_that_began_before_the_call_is_followed_by_one_more_for_every_late_caller() -> None:
    loader = Loader([t(1)])
    loader.hold = True
    view = QueueView("classic", loader, min_interval_s=0.0)
    loop = asyncio.get_running_loop()
    first = asyncio.create_task(view.fresh(loop.time()))
    await loader.started.wait()  # the first read is under way
    loader.tickets.append(t(2))  # a ticket committed after it began
    joined = [asyncio.create_task(view.fresh(since)) for since in (0.0, loop.time() - 3600)]  # asked earlier
    late = [asyncio.create_task(view.fresh(loop.time())) for _ in range(100)]
    for _ in range(100):
        view.changed()  # nobody watches: no read of its own
    loader.hold = False
    loader.release.set()
    early = await first
    later = await asyncio.gather(*late)
    assert loader.reads == 2
    assert "t2" not in early.tickets
    assert [await j for j in joined] == [early, early]  # they joined the read under way
    assert all(s is later[0] and "t2" in s.tickets for s in later)
    view.close()


async def test_watchers_are_woken_at_once_when_their_ticket_left_and_the_others_later() -> None:
    loader = Loader([t(1), t(2)])
    # the line moving wakes watchers at most once an hour here: only a departure wakes them at once
    view = QueueView("classic", loader, min_interval_s=0.0, wake_interval_s=3600.0, poll_s=3600.0)
    await view.fresh(asyncio.get_running_loop().time())
    watches = [view.watch("t1"), view.watch("t1"), view.watch("t2")]
    while loader.reads < 2:  # watching asks for a read
        await asyncio.sleep(0)
    await asyncio.sleep(0)
    for w in watches:  # the first read woke everyone (the line is news to them); from here on only changes
        w.event.clear()
    loader.tickets.pop(0)  # t1 was matched
    view.changed()
    await asyncio.gather(*(w.wait(timeout=60) for w in watches[:2]))
    assert not watches[2].event.is_set()
    assert view.snapshot is not None and list(view.snapshot.tickets) == ["t2"]
    now = asyncio.get_running_loop().time()
    line = view.snapshot.line("t2", RULES, now)
    assert line is not None and (line.position, line.waiting) == (1, 1)
    # one player alone: the small-table wait (longer than the recent 12 s), less what it has waited
    assert line.estimated_wait_s == pytest.approx(RULES.small_table_wait_s - line.waited_s)
    for w in watches:
        view.unwatch(w)
    assert view.watchers == 0
    view.close()


async def test_a_watched_queue_is_read_again_without_local_changes() -> None:
    loader = Loader([t(1)])
    view = QueueView("classic", loader, min_interval_s=0.0, wake_interval_s=0.0, poll_s=0.0)
    w = view.watch("t1")
    loader.tickets.append(t(2))  # queued by another instance: no local change tells of it
    while view.snapshot is None or "t2" not in view.snapshot.tickets:
        await w.wait(timeout=60)
    view.unwatch(w)
    reads = loader.reads
    await asyncio.sleep(0.05)
    assert loader.reads <= reads + 1  # nobody watches: the reads stop
    view.close()


async def test_a_failed_read_reaches_its_readers_and_the_next_call_reads_again() -> None:
    loader = Loader([t(1)])
    loader.fail = ConnectionError("postgres away")
    view = QueueView("classic", loader, min_interval_s=0.0)
    loop = asyncio.get_running_loop()
    with pytest.raises(ConnectionError):
        await view.fresh(loop.time())
    loader.fail = None
    snapshot = await view.fresh(loop.time())
    assert loader.reads == 2 and list(snapshot.tickets) == ["t1"]
    view.close()
    with pytest.raises(RuntimeError):
        await view.fresh(loop.time() + 1)


async def test_incomplete_parties_wait_and_do_not_count_as_players_ready() -> None:
    loader = Loader([t(1, party="a", size=2), t(2, party="b", size=2), t(3)])
    view = QueueView("classic", loader, min_interval_s=0.0)
    snapshot = await view.fresh(asyncio.get_running_loop().time())
    assert snapshot.queued == 1
    line = snapshot.line("t2", RULES, asyncio.get_running_loop().time())
    assert line is not None and (line.position, line.waiting) == (2, 3)
    view.close()
