"""`monopoly run` (make run): the platform starts, players queue and bot tables play through the API,
the live view shows them, it stops cleanly."""

from __future__ import annotations

import secrets
from pathlib import Path
from urllib.parse import urlsplit

import asyncpg
import pytest

from client.demo import run
from servicekit.embedded import nats_server
from servicekit.natsauth import ADMIN

pytestmark = pytest.mark.integration


async def test_run_plays_tables_and_stops_cleanly(
    server_urls: tuple[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # A platform of its own: a NATS of its own and a database of its own on the session's Postgres, so its
    # services never share durable consumers or rows with the session's platform.
    _, db_url = server_urls
    database = f"run_{secrets.token_hex(4)}"
    conn = await asyncpg.connect(db_url)
    await conn.execute(f"CREATE DATABASE {database}")
    await conn.close()
    own_db = urlsplit(db_url)._replace(path=f"/{database}").geturl()  # the same server, another database
    with nats_server(tmp_path / "nats") as bus:
        monkeypatch.setenv("NATS_URL", bus.url_for(ADMIN))  # a server of one's own: every service logs in as admin
        monkeypatch.setenv("DATABASE_URL", own_db)
        monkeypatch.setenv("MONOPOLY_METRICS_PORTS", "random")  # beside other test runs on this machine
        assert await run(tmp_path, tables=2, clock_scale=60, duration=6.0) == 0
    out = capsys.readouterr()
    assert "commands/s" in out.out and "tables running" in out.out
    assert "queue:" in out.out and "leaderboard" in out.out
    assert "table instances:" in out.out and "64/64 partitions" in out.out  # who runs the tables (ListInstances)
    assert "lobby: http://127.0.0.1:" in out.out  # the gateway's lobby, for a person to play in a browser
    assert "stopped:" in out.err
    assert "table service ready" in (tmp_path / "table.log").read_text()
