"""Where stream messages come from: JetStream (a running platform) or the Parquet archive."""

from __future__ import annotations

import contextlib
import re
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from pathlib import Path

import nats.errors
import pyarrow as pa
import pyarrow.parquet as pq
from nats.js import JetStreamContext
from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy
from nats.js.errors import NotFoundError

from servicekit.bus import TABLE_EVENTS

from .rows import Raw

#: The archive's columns: a stream message, losslessly (the bytes are the `EventBatch`).
ARCHIVE = pa.schema(
    [
        pa.field("stream_seq", pa.int64(), nullable=False),
        pa.field("subject", pa.string()),
        pa.field("published", pa.timestamp("ms", tz="UTC")),
        pa.field("data", pa.binary()),
    ]
)
_FILE = re.compile(r"batch-(\d+)-(\d+)\.parquet$")


async def stream_last_seq(js: JetStreamContext) -> int:
    info = await js.stream_info(TABLE_EVENTS.name)
    return int(info.state.last_seq)


async def from_stream(
    js: JetStreamContext, after: int, durable: str, batch: int = 500, follow: bool = False
) -> AsyncIterator[list[Raw]]:
    """Chunks of messages after stream sequence `after`, in stream order, until the stream is read
    (with `follow`, for ever). The position is the caller's (kept with its data), so the durable
    consumer is recreated at it each time: no ack state on the server to disagree with."""
    with contextlib.suppress(NotFoundError):
        await js.delete_consumer(TABLE_EVENTS.name, durable)
    config = ConsumerConfig(
        durable_name=durable,
        deliver_policy=DeliverPolicy.BY_START_SEQUENCE if after else DeliverPolicy.ALL,
        opt_start_seq=after + 1 if after else None,
        ack_policy=AckPolicy.NONE,
        max_waiting=1,
        inactive_threshold=3600.0,
    )
    sub = await js.pull_subscribe("monopoly.table.*.events", durable=durable, stream=TABLE_EVENTS.name, config=config)
    try:
        while True:
            try:
                msgs = await sub.fetch(batch, timeout=1.0)
            except (TimeoutError, nats.errors.TimeoutError):
                msgs = []
            chunk = [Raw(m.metadata.sequence.stream, m.subject, _published(m.metadata.timestamp), m.data) for m in msgs]
            if chunk:
                yield chunk
            if not follow and (not chunk or msgs[-1].metadata.num_pending == 0):
                return  # read to the end
    finally:
        await sub.unsubscribe()


def _published(stamp: object) -> datetime:
    if isinstance(stamp, datetime):
        return stamp if stamp.tzinfo else stamp.replace(tzinfo=UTC)
    return datetime.now(UTC)


def archive_files(root: Path) -> list[Path]:
    """The archive's files in stream order (their names carry their first and last sequence)."""
    found = [p for p in root.rglob("batch-*.parquet") if _FILE.search(p.name)]
    return sorted(found, key=lambda p: int(_FILE.search(p.name).group(1)))  # type: ignore[union-attr]


def archive_total(root: Path, after: int) -> int:
    total = 0
    for path in archive_files(root):
        _first, last = (int(g) for g in _FILE.search(path.name).groups())  # type: ignore[union-attr]
        if last > after:
            total += pq.ParquetFile(path).metadata.num_rows
    return total


def from_archive(root: Path, after: int, batch: int = 500) -> Iterator[list[Raw]]:
    """Chunks of archived messages after stream sequence `after`, in stream order, each once (a
    message the archiver wrote twice, around a crash, is skipped the second time)."""
    last_seen = after
    for path in archive_files(root):
        _first, last = (int(g) for g in _FILE.search(path.name).groups())  # type: ignore[union-attr]
        if last <= last_seen:
            continue
        table = pq.read_table(path, schema=ARCHIVE).sort_by("stream_seq")
        chunk: list[Raw] = []
        for row in table.to_pylist():
            if row["stream_seq"] <= last_seen:
                continue
            last_seen = row["stream_seq"]
            chunk.append(Raw(row["stream_seq"], row["subject"], row["published"], row["data"]))
            if len(chunk) >= batch:
                yield chunk
                chunk = []
        if chunk:
            yield chunk
