"""`monopoly export` and the archive on real NATS and Postgres: the export holds exactly the
events Postgres holds, also after a kill -9 mid-export; the stream's retention is set."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

import asyncpg
import duckdb
import pytest
from nats.js import JetStreamContext

from analytics import archive, export
from client import BotTable
from monopoly.v1 import table_pb2_grpc
from servicekit.bus import TABLE_EVENTS, TABLE_SIGNALS, Retention, ensure_stream

from .helpers import TIMEOUT

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
async def played(stub: table_pb2_grpc.TableServiceStub) -> list[str]:
    """Three bot tables played to the end through the table service."""
    games = [BotTable(stub, seed=9100 + i, players=2) for i in range(3)]
    for g in games:
        await g.create()
    await asyncio.wait_for(asyncio.gather(*(g.play() for g in games)), TIMEOUT * 2)
    return [g.table_id for g in games]


async def _postgres_counts(pool: asyncpg.Pool, tables: list[str]) -> dict[str, int]:
    rows = await pool.fetch(
        "SELECT table_id, count(*) AS n FROM table_events WHERE table_id = ANY($1) GROUP BY table_id", tables
    )
    return {r["table_id"]: r["n"] for r in rows}


def _duckdb_counts(db: Path, tables: list[str]) -> dict[str, int]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        rows = con.execute(
            "SELECT table_id, count(*) FROM events WHERE list_contains(?, table_id) GROUP BY table_id", [tables]
        ).fetchall()
        (total, distinct) = con.execute("SELECT count(*), count(DISTINCT (table_id, seq)) FROM events").fetchone() or (
            0,
            0,
        )
        assert total == distinct  # nothing doubled
        return {str(t): int(n) for t, n in rows}
    finally:
        con.close()


async def _export_until_caught_up(db: Path, nats_url: str, want: dict[str, int], tables: list[str]) -> None:
    """The relay publishes shortly after the commit: export again (it resumes) until the stream has all."""
    deadline = asyncio.get_running_loop().time() + TIMEOUT
    while True:
        await export.export(db, nats_url=nats_url, progress=False, durable="it-export")
        if _duckdb_counts(db, tables) == want or asyncio.get_running_loop().time() > deadline:
            break
        await asyncio.sleep(0.5)
    assert _duckdb_counts(db, tables) == want


async def test_export_holds_the_same_events_as_postgres(
    played: list[str], pool: asyncpg.Pool, server_urls: tuple[str, str], tmp_path: Path
) -> None:
    want = await _postgres_counts(pool, played)
    assert len(want) == 3 and min(want.values()) > 50
    db = tmp_path / "export.duckdb"
    await _export_until_caught_up(db, server_urls[0], want, played)
    con = duckdb.connect(str(db), read_only=True)
    try:
        games = con.execute(
            "SELECT count(*) FROM games WHERE list_contains(?, table_id) AND finished AND players = 2", [played]
        ).fetchone()
        assert games == (3,)
        assert con.execute("SELECT count(*) FROM dead_letters").fetchone() == (0,)
    finally:
        con.close()


async def test_a_killed_export_resumes_with_nothing_doubled(
    played: list[str], pool: asyncpg.Pool, server_urls: tuple[str, str], js: JetStreamContext, tmp_path: Path
) -> None:
    want = await _postgres_counts(pool, played)
    db = tmp_path / "killed.duckdb"
    env = {**os.environ, "NATS_URL": server_urls[0], "PYTHONPATH": str(ROOT / "libs")}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "analytics",
            "export",
            "--out",
            str(db),
            "--batch",
            "1",
            "--log-commits",
            "--no-progress",
        ],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert proc.stdout is not None
        seen = 0
        for line in proc.stdout:  # a few transactions committed, then kill -9 in the middle of the next ones
            seen += line.startswith("committed")
            if seen >= 3:
                break
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    last = (await js.stream_info(TABLE_EVENTS.name)).state.last_seq
    con = duckdb.connect(str(db), read_only=True)
    (position,) = con.execute("SELECT last_stream_seq FROM export_progress").fetchone() or (0,)
    con.close()
    assert 3 <= position < last  # killed mid-export
    await _export_until_caught_up(db, server_urls[0], want, played)


async def test_the_archive_holds_every_message_and_exports_like_the_stream(
    played: list[str], pool: asyncpg.Pool, js: JetStreamContext, tmp_path: Path
) -> None:
    want = await _postgres_counts(pool, played)
    root = tmp_path / "archive"
    deadline = asyncio.get_running_loop().time() + TIMEOUT
    db = tmp_path / "from-archive.duckdb"
    while True:  # the archiver runs on; each pass writes what arrived since
        await archive.archive_once(js, root, durable="it-archive")
        await export.export(db, archive=root, progress=False)
        if _duckdb_counts(db, played) == want or asyncio.get_running_loop().time() > deadline:
            break
        await asyncio.sleep(0.5)
    assert _duckdb_counts(db, played) == want
    assert all(p.parent.name.startswith("date=") for p in root.rglob("*.parquet"))


async def test_the_streams_keep_the_retention_settings(js: JetStreamContext) -> None:
    # The signals stream is the table service's to create (at its start): made here the same way when
    # this test runs before any platform of this test process started
    await ensure_stream(js, TABLE_SIGNALS)
    events = (await js.stream_info(TABLE_EVENTS.name)).config
    default = Retention()
    assert events.max_age == pytest.approx(default.max_age_days * 86400)
    assert default.max_gb == 0  # no size cap by default: a cap reserves JetStream storage up front
    assert events.max_bytes in (None, -1)
    signals = (await js.stream_info(TABLE_SIGNALS.name)).config
    assert signals.max_age == pytest.approx(default.signals_max_age_days * 86400)


def test_retention_comes_from_the_environment() -> None:
    r = Retention.from_env(
        {"TABLE_EVENTS_MAX_AGE_DAYS": "90", "TABLE_EVENTS_MAX_GB": "2.5", "TABLE_EVENTS_REPLICAS": "3"}
    )
    assert (r.max_age_days, r.max_gb, r.replicas) == (90.0, 2.5, 3)
