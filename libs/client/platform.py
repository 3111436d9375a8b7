"""Start the platform's services as child processes and stop them cleanly.

Used by `monopoly run`, `monopoly demo`, the integration tests and the
platform benchmark: one code path from a laptop to CI.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from dataclasses import dataclass, field
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from servicekit.embedded import free_port

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class ServiceProcess:
    module: str
    env: dict[str, str]
    grpc_port: int
    log_path: Path
    proc: asyncio.subprocess.Process | None = None

    async def start(self, timeout: float = 60.0) -> None:
        log = open(self.log_path, "ab")  # noqa: SIM115 - the child keeps writing to it
        self.proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            self.module,
            cwd=ROOT,
            env=self.env,
            stdout=log,
            stderr=log,
        )
        log.close()
        await wait_healthy(f"127.0.0.1:{self.grpc_port}", self.proc, timeout, self.log_path)

    async def stop(self) -> None:
        if self.proc and self.proc.returncode is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(self.proc.wait(), 15)
            except TimeoutError:
                self.proc.kill()
                await self.proc.wait()

    async def kill(self) -> None:
        """SIGKILL: the crash the service must survive."""
        if self.proc and self.proc.returncode is None:
            self.proc.kill()
            await self.proc.wait()


async def wait_healthy(target: str, proc: asyncio.subprocess.Process, timeout: float, log: Path) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    async with grpc.aio.insecure_channel(target) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        while True:
            if proc.returncode is not None:
                raise RuntimeError(f"service exited with code {proc.returncode}; see {log}")
            try:
                reply = await stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=1)
                if reply.status == health_pb2.HealthCheckResponse.SERVING:
                    return
            except grpc.aio.AioRpcError:
                pass
            if asyncio.get_running_loop().time() > deadline:
                raise RuntimeError(f"service not healthy within {timeout:.0f} s; see {log}")
            await asyncio.sleep(0.1)


@dataclass
class Platform:
    """The services of the platform, against the given NATS and Postgres."""

    nats_url: str
    database_url: str
    data_dir: Path
    clock_scale: int = 1
    table: ServiceProcess = field(init=False)

    def __post_init__(self) -> None:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        port = free_port()
        env = {
            **os.environ,
            "NATS_URL": self.nats_url,
            "DATABASE_URL": self.database_url,
            "TABLE_GRPC_PORT": str(port),
            "TABLE_METRICS_PORT": str(free_port()),
            "CLOCK_SCALE": str(self.clock_scale),
            "PYTHONPATH": os.pathsep.join([str(ROOT / "libs"), str(ROOT), os.environ.get("PYTHONPATH", "")]),
            "PYTHONUNBUFFERED": "1",
        }
        self.table = ServiceProcess("services.table.main", env, port, self.data_dir / "table.log")

    @property
    def table_target(self) -> str:
        return f"127.0.0.1:{self.table.grpc_port}"

    async def start(self) -> None:
        await self.table.start()

    async def stop(self) -> None:
        await self.table.stop()
