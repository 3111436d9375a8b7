"""Start the platform's services as child processes and stop them cleanly.

Used by `monopoly run`, `monopoly demo`, the integration tests and the
platform benchmark: one code path from a laptop to CI.

Each service runs in a session of its own, so a terminal's Ctrl-C or hang-up
reaches only the process that started it, which stops the services in order
(`Platform.stop`); on Linux each also gets SIGTERM if that process dies.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from servicekit import auth, natsauth, settings
from servicekit import tls as tlskit
from servicekit.embedded import die_with_parent, free_port
from servicekit.natsauth import BusUsers
from servicekit.settings import TLSSettings

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class ServiceProcess:
    module: str
    env: dict[str, str]
    grpc_port: int
    log_path: Path
    proc: asyncio.subprocess.Process | None = None
    #: How its health is checked (None: this process's TLS_* settings).
    tls: TLSSettings | None = None

    async def start(self, timeout: float = 60.0) -> None:
        log = open(self.log_path, "ab")  # noqa: SIM115 - the child keeps writing to it
        self.proc = await asyncio.create_subprocess_exec(
            *die_with_parent(),
            sys.executable,
            "-m",
            self.module,
            cwd=ROOT,
            env=self.env,
            stdout=log,
            stderr=log,
            start_new_session=True,
        )
        log.close()
        await wait_healthy(f"127.0.0.1:{self.grpc_port}", self.proc, timeout, self.log_path, self.tls)

    async def stop(self) -> None:
        if self.proc and self.proc.returncode is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(self.proc.wait(), 15)
            except TimeoutError:
                self.proc.kill()
                await self.proc.wait()

    async def freeze(self, seconds: float) -> None:
        """SIGSTOP for `seconds`, then SIGCONT: a paused VM, a process swapped out (its connections stay open)."""
        proc = self.proc
        assert proc is not None and proc.returncode is None, "the service is not running"
        proc.send_signal(signal.SIGSTOP)
        try:
            await asyncio.sleep(seconds)
        finally:
            proc.send_signal(signal.SIGCONT)

    async def kill(self) -> None:
        """SIGKILL: the crash the service must survive."""
        if self.proc and self.proc.returncode is None:
            self.proc.kill()
            await self.proc.wait()


async def wait_healthy(
    target: str, proc: asyncio.subprocess.Process, timeout: float, log: Path, tls: TLSSettings | None = None
) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    async with tlskit.channel(target, tls) as channel:
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


#: The services `Platform` can start, in start order (the table first: the others call it; the
#: gateway, last, calls them all for browsers).
SERVICES = ("table", "auction", "trade", "casino", "rating", "matchmaking", "gateway")
#: The services' own default metrics ports (servicekit.settings): `Platform(fixed_metrics=True)` takes
#: each when it is free, so `curl 127.0.0.1:9101/metrics` finds the table service as documented.
DEFAULT_METRICS_PORTS = {name: 9101 + i for i, name in enumerate(SERVICES)}
#: The services `Platform(replicas=N)` runs N processes of: they share their schema and consumers
#: safely (docs/ARCHITECTURE.md, "Replicas"). The table service runs `table_replicas` times (its
#: instances share the tables by partition leases); the gateway, stateless, once behind its HTTP port.
REPLICATED = ("auction", "trade", "casino", "rating", "matchmaking")


def target_of(addresses: list[str]) -> str:
    """A gRPC target reaching any of `addresses` (`ipv4:` with several: the channel balances its calls
    round robin over the replicas that answer, `servicekit.tls.channel`)."""
    return addresses[0] if len(addresses) == 1 else "ipv4:" + ",".join(addresses)


def port_if_free(port: int) -> int:
    """`port` when nothing listens on it on 127.0.0.1, else a free one."""
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return free_port()
    return port


async def health(target: str, timeout: float = 1.0, tls: TLSSettings | None = None) -> str:
    """A service's gRPC health status by name (SERVING, NOT_SERVING, ...), or "down" when it does not answer."""
    async with tlskit.channel(target, tls) as channel:
        try:
            reply = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=timeout)
        except grpc.aio.AioRpcError:
            return "down"
    return str(health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status))


def use_key(data_dir: Path, extra_env: dict[str, str]) -> auth.Keyring:
    """The token key of a platform on `data_dir`: TOKEN_SECRETS / TOKEN_SECRET when given (in
    `extra_env` or this process's environment), else the data folder's own random key
    (`auth.data_dir_secret`, `<data_dir>/token_secret`, mode 0600), which is then set as this
    process's TOKEN_SECRET: its services inherit it and its own clients (bots, the view) sign with it."""
    given = {k: v for k, v in {**os.environ, **extra_env}.items() if k in ("TOKEN_SECRET", "TOKEN_SECRETS") and v}
    if not given:
        os.environ["TOKEN_SECRET"] = auth.data_dir_secret(data_dir)
        given = {"TOKEN_SECRET": os.environ["TOKEN_SECRET"]}
    return settings.token_secret(given)


def available_services() -> tuple[str, ...]:
    """The services this checkout has (each is a package `services/<name>` with a `main` module)."""
    return tuple(name for name in SERVICES if (ROOT / "services" / name / "main.py").exists())


@dataclass
class Platform:
    """The services of the platform, against the given NATS and Postgres."""

    nats_url: str
    database_url: str
    data_dir: Path
    clock_scale: int = 1
    services: tuple[str, ...] = field(default_factory=available_services)
    #: Settings for the services beyond the defaults (e.g. MATCHMAKING_SMALL_TABLE_WAIT_S).
    extra_env: dict[str, str] = field(default_factory=dict)
    #: Metrics on the services' default ports (9101-9106) where free (`monopoly run`), else random ports.
    fixed_metrics: bool = False
    #: The bus users of an embedded NATS (`servicekit.embedded.servers`): each service logs in as its own
    #: user (NATS_USER, NATS_PASSWORD). None: NATS_URL as given, credentials and all.
    bus: BusUsers | None = None
    #: TLS of every service's gRPC port and NATS connection (their TLS_* settings; the health checks use
    #: it too). None: the environment's TLS_* settings, plaintext when unset.
    tls: TLSSettings | None = None
    #: Processes of each service of `REPLICATED` (each with its own ports and <NAME>_INSTANCE_ID); the
    #: others run once. More than one wants a NATS cluster (`embedded.servers(nats_nodes=3)`).
    replicas: int = 1
    #: Processes of the table service (TABLE_INSTANCE_ID table-1...; each runs the partitions it leases,
    #: and a call that reaches another instance follows `served-by` to it: `servicekit.routing`).
    table_replicas: int = 1
    #: The first process of each service (the one tests kill and restart).
    processes: dict[str, ServiceProcess] = field(init=False)
    #: Every process of each service, the first one first.
    replica_processes: dict[str, list[ServiceProcess]] = field(init=False)
    #: Each service's /metrics port.
    metrics_ports: dict[str, int] = field(init=False)
    #: The key every service signs and verifies tokens with (`use_key`).
    token_secret: auth.Keyring = field(init=False)

    def __post_init__(self) -> None:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        unknown = set(self.services) - set(SERVICES)
        if unknown:
            raise ValueError(f"unknown service(s): {', '.join(sorted(unknown))}")
        if self.replicas < 1:
            raise ValueError("replicas: at least 1")
        counts = {name: self.replicas if name in REPLICATED else 1 for name in SERVICES}
        counts["table"] = max(1, self.table_replicas)
        all_ports = {name: [free_port() for _ in range(counts[name])] for name in SERVICES}
        ports = {name: found[0] for name, found in all_ports.items()}
        self.addresses = {name: [f"127.0.0.1:{port}" for port in found] for name, found in all_ports.items()}
        self.token_secret = use_key(self.data_dir, self.extra_env)
        env = {
            **os.environ,
            "NATS_URL": self.nats_url,
            "DATABASE_URL": self.database_url,
            "CLOCK_SCALE": str(self.clock_scale),
            "TABLE_TARGET": target_of(self.addresses["table"]),
            # Matchmaking matches on the rating service's ratings when the platform runs it.
            "RATING_TARGET": target_of(self.addresses["rating"]) if "rating" in self.services else "",
            "PYTHONPATH": os.pathsep.join([str(ROOT / "libs"), str(ROOT), os.environ.get("PYTHONPATH", "")]),
            "PYTHONUNBUFFERED": "1",
            # Tables matchmaking forms delegate the sub-protocols this platform runs services for.
            "EXTERNAL_SUBPROTOCOLS": ",".join(n for n in ("auction", "trade", "casino") if n in self.services),
            **self.extra_env,
        }
        self.metrics_ports = {
            name: port_if_free(DEFAULT_METRICS_PORTS[name]) if self.fixed_metrics else free_port() for name in SERVICES
        }
        #: Every replica's /metrics port (the first is `metrics_ports`' own).
        self.replica_metrics_ports = {
            name: [self.metrics_ports[name], *(free_port() for _ in range(counts[name] - 1))] for name in SERVICES
        }
        for name in SERVICES:
            env[f"{name.upper()}_GRPC_PORT"] = str(ports[name])
            env[f"{name.upper()}_METRICS_PORT"] = str(self.metrics_ports[name])
        # The gateway reaches every service it finds here; browsers reach it over HTTP.
        self.gateway_http_port = int(self.extra_env.get("GATEWAY_HTTP_PORT") or free_port())
        env["GATEWAY_HTTP_PORT"] = str(self.gateway_http_port)
        for name in ("matchmaking", "auction", "trade", "casino"):
            env[f"{name.upper()}_TARGET"] = target_of(self.addresses[name]) if name in self.services else ""
        self.replica_processes = {
            name: [self._process(name, env, i, counts[name], all_ports[name][i]) for i in range(counts[name])]
            for name in SERVICES
            if name in self.services
        }
        self.processes = {name: found[0] for name, found in self.replica_processes.items()}

    def _process(self, name: str, env: dict[str, str], index: int, count: int, port: int) -> ServiceProcess:
        """Replica `index` of `count` of a service: its own ports, instance id and log (`<name>.log` for
        the first, `<name>-2.log`... for the others)."""
        own = self._env(name, env)
        if count > 1:
            instance = f"{name}-{index + 1}"
            prefix = name.upper()
            own.update(
                {
                    f"{prefix}_GRPC_PORT": str(port),
                    f"{prefix}_METRICS_PORT": str(self.replica_metrics_ports[name][index]),
                    f"{prefix}_INSTANCE_ID": instance,
                    "INSTANCE_ID": instance,
                    f"{prefix}_REPLICAS": str(count),
                }
            )
            if name == "table":  # where other instances send a caller of a table it runs (`served-by`)
                own["TABLE_ADVERTISE_ADDRESS"] = f"127.0.0.1:{port}"
        log = self.data_dir / (f"{name}.log" if index == 0 else f"{name}-{index + 1}.log")
        return ServiceProcess(f"services.{name}.main", own, port, log, tls=self.tls)

    def _env(self, name: str, env: dict[str, str]) -> dict[str, str]:
        """A service's own environment: the common one, the platform's TLS and its bus credentials
        (none for a service that does not use the bus)."""
        own = dict(env)
        if self.tls is not None:
            own.update(self.tls.env())
        if self.bus is not None and name in self.bus.passwords:
            own.update(self.bus.env_for(name))
        elif self.bus is None:  # NATS_URL's own server, open (the tests' shared one): said, not assumed
            own.setdefault("NATS_ANONYMOUS", "1")
        return own

    @property
    def table(self) -> ServiceProcess:
        return self.processes["table"]

    def target(self, service: str) -> str:
        """Where a client reaches the service: any of its replicas (`target_of`)."""
        return target_of([f"127.0.0.1:{p.grpc_port}" for p in self.replica_processes[service]])

    @property
    def lobby_url(self) -> str:
        """Where a browser finds the lobby (the gateway's HTTP server)."""
        return f"http://127.0.0.1:{self.gateway_http_port}/"

    @property
    def table_target(self) -> str:
        return self.target("table")

    @property
    def external(self) -> tuple[str, ...]:
        """The sub-protocols this platform runs in services of their own (for CreateTable)."""
        return tuple(name for name in ("auction", "trade", "casino") if name in self.processes)

    async def start(self, table_ready: Callable[[], Awaitable[None]] | None = None) -> None:
        """In start order, one after the other (started side by side, a service restarted later lost the
        auction it held); beside them, from the moment the table service answers, `table_ready` (`monopoly
        run` drives the tables the table service resumed at once: their timers run)."""
        if self.bus is not None:
            await self.provision_streams()
        first, *_ = self.processes.values()
        await first.start()
        later = [p for found in self.replica_processes.values() for p in found if p is not first]

        async def others() -> None:
            for process in later:
                await process.start()

        await asyncio.gather(others(), *([table_ready()] if table_ready else []))
        self.targets_path.write_text(json.dumps(self.targets, indent=2) + "\n")

    async def provision_streams(self) -> None:
        """Every stream created, or brought to its spec, as the bus's admin before any service starts: a
        service's own user may only create its streams, never change them (`servicekit.natsauth`)."""
        assert self.bus is not None
        tls = tlskit.nats_context(self.tls or TLSSettings.from_env())  # the services' own, else inherited
        nc, _ = await natsauth.connect(self.bus.url_for(natsauth.ADMIN), tls=tls, give_up_after_s=60.0)
        await nc.close()

    @property
    def targets_path(self) -> Path:
        """Where a running platform's addresses are, for clients in other terminals (`monopoly load`)."""
        return self.data_dir / "targets.json"

    @property
    def targets(self) -> dict[str, object]:
        """Each service's target (any of its replicas), the lobby, every replica's address, and the clock
        scale the tables matchmaking forms run at (a load at a person's pace needs 1)."""
        replicas = {name: [f"127.0.0.1:{p.grpc_port}" for p in found] for name, found in self.replica_processes.items()}
        return {name: self.target(name) for name in self.processes} | {
            "lobby": self.lobby_url,
            "replicas": replicas,
            "clock_scale": self.clock_scale,
        }

    async def stop(self) -> None:
        """Every service SIGTERM'd and reaped: the others side by side, then the table service they call
        (its instances side by side)."""
        self.targets_path.unlink(missing_ok=True)
        tables = self.replica_processes.get("table", [])
        rest = [p for found in self.replica_processes.values() for p in found if p not in tables]
        await asyncio.gather(*(process.stop() for process in rest))
        await asyncio.gather(*(process.stop() for process in tables))
