"""`monopoly run` (make run): the platform starts, bot tables play through the API, it stops cleanly."""

from __future__ import annotations

from pathlib import Path

import pytest

from client.demo import run

pytestmark = pytest.mark.integration


async def test_run_plays_tables_and_stops_cleanly(
    server_urls: tuple[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    nats_url, db_url = server_urls
    monkeypatch.setenv("NATS_URL", nats_url)
    monkeypatch.setenv("DATABASE_URL", db_url)
    assert await run(tmp_path, tables=2, clock_scale=60, duration=4.0) == 0
    out = capsys.readouterr()
    assert "commands/s" in out.out and "tables running" in out.out
    assert "stopped:" in out.err
    assert "table service ready" in (tmp_path / "table.log").read_text()
