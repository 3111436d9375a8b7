"""Export throughput: N simulated events as stream messages -> Parquet archive -> DuckDB.

    python bench/analytics_bench.py [EVENTS]   (default 200000)

Plays bot games with the simulator (one message per command, as the table
service publishes), writes them with the archiver's writer, exports the archive
into DuckDB and prints the times, events per second and file sizes. The
stream path (NATS) costs the same decoding and loading plus the fetches.
"""

from __future__ import annotations

import asyncio
import shutil
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from analytics import archive, export
from analytics.rows import Raw
from engine import PRESETS, Event
from engine.state import TableState
from monopoly.v1 import common_pb2
from servicekit.wire import envelope
from sim.runner import play_game


def messages(target: int) -> list[Raw]:
    raws: list[Raw] = []
    events = 0
    game = 0
    day = datetime(2026, 12, 1, tzinfo=UTC)
    while events < target:
        table_id = f"bench-{game}"
        seq = 0

        def on_events(_state: TableState, new: list[Event], table_id: str = table_id) -> None:
            nonlocal seq, events
            batch = common_pb2.EventBatch()
            for event in new:
                seq += 1
                batch.events.append(envelope(table_id, seq, event, 1000 * seq, 60, 1_764_547_200_000 + seq))
            events += len(new)
            raws.append(Raw(len(raws) + 1, f"monopoly.table.{table_id}.events", day, batch.SerializeToString()))

        play_game(PRESETS["classic"](), 4, game, "heuristic", on_events=on_events, think_ms=3000)
        game += 1
    return raws


def size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.is_dir() else path.stat().st_size


def main() -> int:
    target = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
    work = Path(tempfile.mkdtemp(prefix="analytics-bench-"))
    try:
        t0 = time.perf_counter()
        raws = messages(target)
        t1 = time.perf_counter()
        for i in range(0, len(raws), archive.FETCH):
            archive.write_file(work / "archive", raws[i : i + archive.FETCH])
        t2 = time.perf_counter()
        c2 = time.process_time()
        result = asyncio.run(export.export(work / "bench.duckdb", archive=work / "archive", batch=2000, progress=False))
        t3 = time.perf_counter()
        cpu = time.process_time() - c2  # all of the process's threads (DuckDB's too)
        raw_bytes = sum(len(r.data) for r in raws)
        print(f"{result.events} events in {len(raws)} messages ({raw_bytes / 1e6:.1f} MB of EventBatch bytes)")
        print(f"simulate {t1 - t0:.1f} s; archive {t2 - t1:.1f} s ({size(work / 'archive') / 1e6:.1f} MB Parquet)")
        print(
            f"export {t3 - t2:.1f} s wall, {cpu:.1f} s CPU = {result.events / (t3 - t2):,.0f} events/s wall, "
            f"{result.events / cpu:,.0f} per CPU second ({size(work / 'bench.duckdb') / 1e6:.1f} MB DuckDB)"
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
