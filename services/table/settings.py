"""The table service's settings: the common ones (ports 50051 and 9101 by default) and its own."""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass

from servicekit import settings as kit
from servicekit.settings import Env, Settings


def common(env: Env | None = None) -> Settings:
    """The settings every service has (`servicekit.settings.Settings`), with this service's default ports."""
    return Settings.from_env("table", 50051, 9101, env)


@dataclass(frozen=True, slots=True)
class TableSettings:
    base: Settings
    #: CLOCK_SCALE: the game clock's speed-up of tables created without one (E6).
    default_clock_scale: int
    #: SNAPSHOT_EVERY: events between two snapshots of a table in Postgres.
    snapshot_every: int
    #: GROUP_COMMIT: commits of different tables written together at most (1: each on its own).
    group_commit: int
    #: TABLE_MAX_TABLES: unfinished tables this instance holds at most (CreateTable past it: RESOURCE_EXHAUSTED).
    max_tables: int = 10_000
    #: TABLE_IDLE_EVICT_S: an actor nobody used this long leaves memory (`idle`; 0: never).
    idle_evict_s: float = 300.0
    #: TABLE_FINISHED_EVICT_S: the same for a finished table (0: never).
    finished_evict_s: float = 30.0
    #: TABLE_INSTANCE_ID: this instance's name among those sharing the tables (default: host-pid).
    instance_id: str = ""
    #: TABLE_PARTITIONS: how many partitions the tables are split into; fixed at the database's first start.
    partitions: int = 64
    #: TABLE_LEASE_TTL_S: how long a partition's lease lasts unrenewed (renewed every third of it).
    lease_ttl_s: float = 5.0
    #: TABLE_ADVERTISE_ADDRESS: where clients reach this instance (default: SERVICE_HOST:TABLE_GRPC_PORT,
    #: the host name when it serves on every interface).
    address: str = ""

    @staticmethod
    def from_env(env: Env | None = None) -> TableSettings:
        e = kit.environ(env)
        return TableSettings(
            base=common(e),
            default_clock_scale=kit.clock_scale(e),
            snapshot_every=int(e.get("SNAPSHOT_EVERY", "500")),
            group_commit=max(1, int(e.get("GROUP_COMMIT", "128"))),
            max_tables=max(1, int(e.get("TABLE_MAX_TABLES", "10000"))),
            idle_evict_s=float(e.get("TABLE_IDLE_EVICT_S", "300")),
            finished_evict_s=float(e.get("TABLE_FINISHED_EVICT_S", "30")),
            instance_id=e.get("TABLE_INSTANCE_ID") or f"{socket.gethostname()}-{os.getpid()}",
            partitions=max(1, int(e.get("TABLE_PARTITIONS", "64"))),
            lease_ttl_s=max(0.3, float(e.get("TABLE_LEASE_TTL_S", "5"))),
            address=e.get("TABLE_ADVERTISE_ADDRESS") or _address(e.get("SERVICE_HOST", "127.0.0.1"), e),
        )


def _address(host: str, env: Env) -> str:
    reachable = socket.gethostname() if host in ("", "0.0.0.0", "::") else host
    return f"{reachable}:{common(env).grpc_port}"
