"""NATS and Postgres servers the fault suite can kill, stop and restart on the same data dirs.

`servicekit.embedded` hides its servers' processes (a server lives as long as its `with` block);
faults need their hands on them: SIGKILL of the postmaster and every backend, a clean `pg_ctl stop`,
SIGKILL of nats-server, each restarted on the data it left.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import subprocess
import sys
from pathlib import Path

import psutil

from servicekit.embedded import NATS_CONFIG_FILE, _wait_port, free_port, nats_binary, nats_config
from servicekit.natsauth import ADMIN

ROOT = Path(__file__).resolve().parents[2]


class Postgres:
    """pgserver's Postgres on a unix socket in `data_dir`, driven by `tests.faults.pgctl` in a process
    of its own; its URL stays the same across restarts."""

    def __init__(self, data_dir: Path, database: str = "monopoly") -> None:
        self.pgdata = data_dir / "pgdata"
        self.database = database
        self.url = ""

    async def _ctl(self, action: str) -> str:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "tests.faults.pgctl",
            action,
            str(self.pgdata),
            self.database,
            cwd=ROOT,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(proc.communicate(), 120)
        if proc.returncode != 0:
            raise RuntimeError(f"pgctl {action} failed: {err.decode(errors='replace')[-2000:]}")
        return out.decode().strip()

    async def start(self, timeout: float = 120.0) -> str:
        """Start it (the first time: initdb and the database), or again on the same data dir. pgserver
        gives `pg_ctl start` 10 s, which crash recovery on a loaded machine can outlast: try again (the
        postmaster it launched goes on starting) until `timeout`."""
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            try:
                self.url = (await self._ctl("start")).splitlines()[-1]
                return self.url
            except RuntimeError:
                if asyncio.get_running_loop().time() > deadline:
                    raise
                await asyncio.sleep(1.0)

    async def stop(self) -> None:
        """A fast shutdown (`pg_ctl -m fast stop`): sessions are ended, the socket goes away."""
        await self._ctl("stop")

    def kill(self) -> None:
        """SIGKILL the postmaster and every backend: a crash, not a shutdown."""
        pid = int((self.pgdata / "postmaster.pid").read_text().split()[0])
        postmaster = psutil.Process(pid)
        victims = [postmaster, *postmaster.children(recursive=True)]
        for proc in victims:
            with contextlib.suppress(psutil.NoSuchProcess):
                proc.send_signal(signal.SIGKILL)
        psutil.wait_procs(victims, timeout=10)

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            await self.stop()


class Nats:
    """nats-server with JetStream on a fixed port and store dir, and the platform's users
    (`servicekit.embedded.nats_config`), so a restart is the same server."""

    def __init__(self, data_dir: Path) -> None:
        self.port = free_port()
        self.config = data_dir / NATS_CONFIG_FILE
        self.users = nats_config(data_dir, self.port)
        self.log_path = data_dir / "nats.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self.url = self.users.url

    @property
    def admin_url(self) -> str:
        """The URL with the admin user's credentials: the suite's own connections."""
        return self.users.url_for(ADMIN)

    def start(self) -> str:
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                [nats_binary(), "-c", str(self.config)],
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        _wait_port(self.port, "nats-server", self.proc)
        return self.url

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.kill()
        self.proc.wait(10)

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
