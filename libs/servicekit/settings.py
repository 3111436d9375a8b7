"""Settings from the environment, with defaults that work on a laptop."""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Settings:
    nats_url: str
    database_url: str
    table_grpc_port: int
    table_metrics_port: int
    host: str
    #: Tables run their game clock this many times faster than real time unless created otherwise (E6).
    default_clock_scale: int
    #: Events between two snapshots of a table in Postgres.
    snapshot_every: int

    @staticmethod
    def from_env(env: dict[str, str] | None = None) -> Settings:
        e = os.environ if env is None else env
        return Settings(
            nats_url=e.get("NATS_URL", ""),
            database_url=e.get("DATABASE_URL", ""),
            table_grpc_port=int(e.get("TABLE_GRPC_PORT", "50051")),
            table_metrics_port=int(e.get("TABLE_METRICS_PORT", "9101")),
            host=e.get("SERVICE_HOST", "127.0.0.1"),
            default_clock_scale=int(e.get("CLOCK_SCALE", "1")),
            snapshot_every=int(e.get("SNAPSHOT_EVERY", "500")),
        )
