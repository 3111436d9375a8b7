"""Export throughput: N simulated events as stream messages -> Parquet archive -> DuckDB.

    python bench/analytics_bench.py [EVENTS] [RUNS]   (default 1000000 events, 3 runs)
    make bench-analytics EVENTS=1000000 RUNS=3

Plays bot games with the simulator once (one message per command, as the table
service publishes), then RUNS times into a fresh folder: writes them with the
archiver's writer, exports the archive into DuckDB, and prints each run and the
medians: times, events per second and file sizes. The stream path (NATS) costs
the same decoding and loading plus the fetches. Wall time counts waiting for a
core on a busy machine; CPU time is the process's (DuckDB's threads included).
"""

from __future__ import annotations

import asyncio
import shutil
import statistics
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
from servicekit.wire import SCHEMA_VERSION, envelope
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


def one_run(raws: list[Raw]) -> dict[str, float]:
    work = Path(tempfile.mkdtemp(prefix="analytics-bench-"))
    try:
        t1 = time.perf_counter()
        for i in range(0, len(raws), archive.FETCH):
            archive.write_file(work / "archive", raws[i : i + archive.FETCH])
        t2 = time.perf_counter()
        c2 = time.process_time()
        result = asyncio.run(export.export(work / "bench.duckdb", archive=work / "archive", batch=2000, progress=False))
        t3 = time.perf_counter()
        return {
            "events": result.events,
            "dead": result.dead_letters,
            "archive_s": t2 - t1,
            "export_s": t3 - t2,
            "export_cpu_s": time.process_time() - c2,  # all of the process's threads (DuckDB's too)
            "parquet_mb": size(work / "archive") / 1e6,
            "duckdb_mb": size(work / "bench.duckdb") / 1e6,
        }
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> int:
    target = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    t0 = time.perf_counter()
    raws = messages(target)
    events = sum(len(common_pb2.EventBatch.FromString(r.data).events) for r in raws)
    raw_mb = sum(len(r.data) for r in raws) / 1e6
    print(
        f"{events} events (schema version {SCHEMA_VERSION}) in {len(raws)} messages, {raw_mb:.1f} MB of EventBatch "
        f"bytes, simulated in {time.perf_counter() - t0:.1f} s; {runs} runs"
    )
    results = []
    for run in range(1, runs + 1):
        r = one_run(raws)
        assert (r["events"], r["dead"]) == (events, 0), r  # every event exported once, none dead
        results.append(r)
        print(
            f"run {run}: archive {r['archive_s']:.1f} s ({r['parquet_mb']:.1f} MB Parquet); export "
            f"{r['export_s']:.1f} s wall, {r['export_cpu_s']:.1f} s CPU ({r['duckdb_mb']:.1f} MB DuckDB)"
        )

    def med(key: str) -> float:
        return statistics.median(r[key] for r in results)

    print(
        f"median: archive {med('archive_s'):.1f} s = {events / med('archive_s'):,.0f} events/s "
        f"({med('parquet_mb'):.1f} MB Parquet); export {med('export_s'):.1f} s wall = "
        f"{events / med('export_s'):,.0f} events/s, {med('export_cpu_s'):.1f} s CPU = "
        f"{events / med('export_cpu_s'):,.0f} events per CPU second ({med('duckdb_mb'):.1f} MB DuckDB)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
