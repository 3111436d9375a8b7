"""`monopoly export`: the table event stream into DuckDB, resumable, exactly once per event."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path

import duckdb
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from servicekit.natsauth import connect

from . import rows, sources, store

#: The export's consumer on the table event stream (recreated at the file's position on each run).
DURABLE = "analytics-export"


@dataclass(frozen=True, slots=True)
class Result:
    messages: int
    events: int
    dead_letters: int
    position: int
    seconds: float

    def summary(self) -> str:
        dead = (
            f"; {self.dead_letters} message(s) could not be decoded: see the dead_letters table"
            if self.dead_letters
            else ""
        )
        return (
            f"exported {self.events} events from {self.messages} messages in {self.seconds:.1f} s "
            f"(stream position {self.position}){dead}"
        )


Report = Callable[[int, int], None]  # (messages done, messages in all)


def _progress(enabled: bool) -> tuple[Report, Callable[[], None]]:
    if not enabled:
        return (lambda _done, _total: None), (lambda: None)
    bar = Progress(TextColumn("export"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
    task = bar.add_task("export", total=None)
    bar.start()

    def report(done: int, total: int) -> None:
        bar.update(task, completed=done, total=max(total, done))

    return report, bar.stop


#: How long an export or an archive run waits for its first connection to NATS before saying why not.
CONNECT_WITHIN_S = 15.0


async def _chunks(
    nats_url: str, after: int, batch: int, follow: bool, durable: str
) -> AsyncIterator[tuple[list[rows.Raw], int]]:
    nc, js = await connect(nats_url, give_up_after_s=CONNECT_WITHIN_S)
    try:
        total = await sources.stream_last_seq(js) - after
        async for chunk in sources.from_stream(js, after, durable, batch, follow):
            yield chunk, total
    finally:
        await nc.close()


async def _archive_chunks(root: Path, after: int, batch: int) -> AsyncIterator[tuple[list[rows.Raw], int]]:
    total = sources.archive_total(root, after)
    for chunk in sources.from_archive(root, after, batch):
        yield chunk, total
        await asyncio.sleep(0)


def _revive(con: duckdb.DuckDBPyConnection) -> int:
    """Decode again the messages an older reader dead-lettered (a type or value it did not know): those
    this reader decodes join the file and leave the dead letters, in one transaction. Their events."""
    dead = store.dead_letters(con)
    if not dead:
        return 0
    built = rows.build(dead, set())
    still = {d["stream_seq"] for d in built.dead}
    revived = [raw.stream_seq for raw in dead if raw.stream_seq not in still]
    if not revived:
        return 0
    built.dead = []
    built.last_stream_seq = store.position(con)  # the position stays where it is
    return store.commit(con, built, revived)


async def export(
    out: Path,
    nats_url: str = "",
    archive: Path | None = None,
    batch: int = 2000,
    follow: bool = False,
    progress: bool = True,
    on_commit: Callable[[int, int], None] | None = None,
    durable: str = DURABLE,
) -> Result:
    """Load the stream (from `nats_url`, else from the `archive` directory) into the DuckDB file
    `out`, from where the file stopped. Each chunk of messages is one transaction together with
    its position, so a killed export resumes with nothing doubled and nothing lost."""
    start = time.perf_counter()
    con = store.open_db(out)
    try:
        revived = _revive(con)
        after = store.position(con)
        chunks = (
            _archive_chunks(archive, after, batch)
            if archive is not None
            else _chunks(nats_url, after, batch, follow, durable)
        )
        report, stop = _progress(progress)
        messages = events = dead = 0
        try:
            async for chunk, total in chunks:
                built = rows.build(chunk, set())
                messages += len(chunk)
                events += store.commit(con, built)
                dead += len(built.dead)
                report(messages, total)
                if on_commit is not None:
                    on_commit(messages, built.last_stream_seq)
        finally:
            stop()
        return Result(messages, events + revived, dead, store.position(con), time.perf_counter() - start)
    finally:
        con.close()
