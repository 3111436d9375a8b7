"""The archiver: every message of the table event stream into Parquet, by date, before it ages out.

A durable pull consumer (`analytics-archive`, acks of the whole chunk) reads the stream;
each fetched chunk becomes one file
`<root>/date=YYYY-MM-DD/batch-<first stream seq>-<last>.parquet` (the date the
message was published, UTC), written to a temporary name, synced and renamed,
and only then acked. A crash between the rename and the ack writes those
messages again in a later file: the archive is at least once, and its readers
(`monopoly export --archive`) take each stream sequence once. The bytes are
kept as published, so the archive replays exactly what the stream held.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections import defaultdict
from pathlib import Path

import nats.errors
import pyarrow as pa
import pyarrow.parquet as pq
from nats.aio.msg import Msg
from nats.js import JetStreamContext
from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy

from servicekit.bus import TABLE_EVENTS

from .rows import Raw
from .sources import ARCHIVE, _published

DURABLE = "analytics-archive"
#: Messages per fetch (and at most per file), and the wait for the first of them.
FETCH = 2000
FETCH_TIMEOUT_S = 2.0


def write_file(root: Path, raws: list[Raw]) -> list[Path]:
    """`raws` as Parquet files, one per publication date; returns the files written."""
    by_date: dict[str, list[Raw]] = defaultdict(list)
    for raw in raws:
        by_date[raw.published.strftime("%Y-%m-%d")].append(raw)
    written = []
    for date, group in sorted(by_date.items()):
        folder = root / f"date={date}"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"batch-{group[0].stream_seq:012d}-{group[-1].stream_seq:012d}.parquet"
        table = pa.table(
            {
                "stream_seq": [r.stream_seq for r in group],
                "subject": [r.subject for r in group],
                "published": [r.published for r in group],
                "data": [r.data for r in group],
            },
            schema=ARCHIVE,
        )
        tmp = path.with_suffix(".tmp")
        pq.write_table(table, tmp, compression="zstd")
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        os.replace(tmp, path)
        written.append(path)
    return written


async def archive_once(js: JetStreamContext, root: Path, fetch: int = FETCH, durable: str = DURABLE) -> int:
    """Archive what the stream holds beyond the consumer's acks; returns the messages written."""
    config = ConsumerConfig(
        durable_name=durable,
        deliver_policy=DeliverPolicy.ALL,
        ack_policy=AckPolicy.ALL,
        ack_wait=120.0,
        max_ack_pending=fetch * 2,
    )
    sub = await js.pull_subscribe("monopoly.table.*.events", durable=durable, stream=TABLE_EVENTS.name, config=config)
    done = 0
    try:
        while True:
            try:
                msgs: list[Msg] = await sub.fetch(fetch, timeout=FETCH_TIMEOUT_S)
            except (TimeoutError, nats.errors.TimeoutError):
                return done
            raws = [Raw(m.metadata.sequence.stream, m.subject, _published(m.metadata.timestamp), m.data) for m in msgs]
            write_file(root, raws)
            await msgs[-1].ack_sync()  # AckPolicy.ALL: the last acks the chunk, once it is on disk
            done += len(msgs)
            if msgs[-1].metadata.num_pending == 0:
                return done
    finally:
        with contextlib.suppress(Exception):
            await sub.unsubscribe()


async def run_archiver(
    js: JetStreamContext, root: Path, idle_s: float = 5.0, stop: asyncio.Event | None = None
) -> None:
    """Archive for ever (until `stop`): what a deployment runs next to the services."""
    stop = stop or asyncio.Event()
    while not stop.is_set():
        await archive_once(js, root)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), idle_s)
