"""The embedded Postgres's first start: `max_connections` is raised with one restart, and a restart
that failed (pg_ctl once died of SIGSEGV there, in a test's fixture) is made again."""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path
from typing import Any

import asyncpg
import pgserver._commands
import pytest

from servicekit.embedded import MAX_CONNECTIONS, postgres_server

pytestmark = pytest.mark.integration


async def test_a_failed_restart_is_made_again(monkeypatch: pytest.MonkeyPatch) -> None:
    real = pgserver._commands.pg_ctl
    restarts: list[list[str]] = []

    def flaky(args: list[str], **kwargs: Any) -> Any:
        if "restart" in args:
            restarts.append(args)
            if len(restarts) == 1:
                raise subprocess.CalledProcessError(-11, ["pg_ctl", *args])  # as the SIGSEGV was reported
        return real(args, **kwargs)

    monkeypatch.setattr(pgserver._commands, "pg_ctl", flaky)
    # Not under pytest's base temp: pgserver's Postgres (user "pgserver" under root) must reach it.
    with tempfile.TemporaryDirectory(prefix="monopoly-pgrestart-") as tmp, postgres_server(Path(tmp)) as url:
        conn = await asyncpg.connect(url)
        try:
            assert int(await conn.fetchval("SHOW max_connections")) >= MAX_CONNECTIONS
        finally:
            await conn.close()
    assert len(restarts) == 2
