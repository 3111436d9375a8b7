"""The embedded Postgres's first start: `max_connections` is raised with one restart, and a start or a
restart that failed (pg_ctl once died of SIGSEGV at a restart, of SIGBUS at a first start) is made again."""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path
from typing import Any

import asyncpg
import pgserver._commands
import pgserver.postgres_server
import pytest

from servicekit.embedded import MAX_CONNECTIONS, START_ATTEMPTS, postgres_server

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


def _failing_starts(monkeypatch: pytest.MonkeyPatch, failures: int) -> list[list[str]]:
    """pgserver's `pg_ctl start` dies of SIGBUS (-7) `failures` times before it runs: no server log is
    written, so pgserver's own error handling raises FileNotFoundError, as in the CI run that failed."""
    real = pgserver.postgres_server.pg_ctl
    starts: list[list[str]] = []

    def flaky(args: list[str], **kwargs: Any) -> Any:
        if "start" in args:
            starts.append(args)
            if len(starts) <= failures:
                raise subprocess.CalledProcessError(-7, ["pg_ctl", *args])
        return real(args, **kwargs)

    monkeypatch.setattr(pgserver.postgres_server, "pg_ctl", flaky)
    return starts


async def test_a_failed_first_start_is_made_again(monkeypatch: pytest.MonkeyPatch) -> None:
    starts = _failing_starts(monkeypatch, failures=1)
    with tempfile.TemporaryDirectory(prefix="monopoly-pgstart-") as tmp, postgres_server(Path(tmp)) as url:
        conn = await asyncpg.connect(url)
        try:
            assert await conn.fetchval("SELECT 1") == 1
        finally:
            await conn.close()
    assert len(starts) == 2


def test_a_start_that_keeps_failing_reports_pg_ctl(monkeypatch: pytest.MonkeyPatch) -> None:
    starts = _failing_starts(monkeypatch, failures=START_ATTEMPTS)
    with tempfile.TemporaryDirectory(prefix="monopoly-pgstart-") as tmp:
        with pytest.raises(subprocess.CalledProcessError) as failed, postgres_server(Path(tmp)):
            pass
        assert failed.value.returncode == -7
        # no half-made server is left in pgserver's cache for the next caller on this folder
        assert (Path(tmp) / "pgdata").resolve() not in pgserver.postgres_server.PostgresServer._instances
    assert len(starts) == START_ATTEMPTS
